/*
 * gz: the one gzip writer of dsight.
 *
 * Every gzip member dsight writes (detail shards, the core catalog inside
 * index.html, trace-data.json.gz) has mtime 0, no file name and OS 255
 * (unknown), so equal input at the same level gives equal bytes: shard names
 * are content hashes and a rebuild of the same evidence repeats them.
 *
 * Two uses: gz_member compresses a whole buffer in one call (the output
 * grows in a caller-owned array) with libdeflate, which deflates a buffer
 * it holds whole at twice zlib's speed into fewer bytes (doc/performance.md
 * "Shard compression"); gz_stream feeds a long document through zlib in
 * pieces and hands each compressed piece to a callback.  A struct gz keeps
 * its compressor between members (reset, not reallocated).  The level means
 * libdeflate's (1..12) to gz_member and zlib's (1..9) to gz_stream.
 */
#ifndef DSIGHT_GZ_H
#define DSIGHT_GZ_H

#include <stddef.h>
#include <zlib.h>

struct libdeflate_compressor;

#include "base/err.h"

struct gz {
	z_stream z;
	gz_header header; /* zlib reads it while deflating: it lives here */
	struct libdeflate_compressor *ld; /* gz_member's, made at first use */
	int level;  /* libdeflate 1..12 (gz_member), zlib 1..9 (gz_stream) */
	int ready;  /* z initialised */
	int open;   /* gz_stream: a member is in progress */
	unsigned char *chunk; /* gz_stream's output piece */
};

/* Prepares g for members at level (see above).  Allocates nothing. */
void gz_init(struct gz *g, int level);

/*
 * Compresses data[0..len) into one whole gzip member in *out, growing *out
 * (realloc; *cap its size in bytes) when the member may not fit; *outlen
 * gets the member's size.  *out stays owned by the caller (free it), also
 * on failure.  Errors: ERR_NOMEM, ERR_DATA (a level libdeflate lacks);
 * `what` names the
 * data in the message ("a shard", "the catalog").
 */
int gz_member(struct gz *g, const void *data, size_t len, unsigned char **out,
              size_t *cap, size_t *outlen, const char *what, struct err *e);

/* Receives a compressed piece; returns 0 or an ERR_* code with e filled. */
typedef int (*gz_write_fn)(void *ctx, const unsigned char *p, size_t n,
                           struct err *e);

/*
 * Compresses data[0..len) as the next part of a streamed member (started by
 * the first call) and passes every compressed piece to write; finish ends
 * the member.  data may be empty.  Errors as gz_member, or write's.
 */
int gz_stream(struct gz *g, const void *data, size_t len, int finish,
              gz_write_fn write, void *ctx, const char *what, struct err *e);

/* Frees g's compressors; g may be reused after gz_init. */
void gz_free(struct gz *g);

#endif
