/*
 * frame: the length-prefixed frames of the session socket.
 *
 * A frame is a 4-byte unsigned big-endian length followed by that many bytes
 * of UTF-8 JSON.  The decoder is incremental (feed it whatever a
 * non-blocking read returned) and checks a frame's announced length against
 * its limit BEFORE allocating anything for the body.  The encoder writes a
 * frame in place into a struct buf (reserve the header, append the body,
 * patch the length).
 */
#ifndef DSIGHT_FRAME_H
#define DSIGHT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define FRAME_HEADER 4
/* 8 MiB client -> server: room for an sql statement of 1 MiB however JSON
 * escapes it (at most 6 bytes a byte) with the other parameters */
#define FRAME_REQUEST_MAX ((size_t)8 << 20)
#define FRAME_RESPONSE_MAX ((size_t)64 << 20) /* 64 MiB: server -> client */

/* An incremental decoder.  Zero-initialise with frame_reader_init. */
struct frame_reader {
	unsigned char hdr[FRAME_HEADER];
	size_t hdr_len;  /* header bytes received so far */
	size_t need;     /* body length announced by the header */
	struct buf body; /* body bytes received so far */
	size_t max;      /* largest acceptable body */
};

void frame_reader_init(struct frame_reader *r, size_t max);
void frame_reader_free(struct frame_reader *r);
/* 1 when the reader is between frames (nothing partial buffered). */
int frame_reader_idle(const struct frame_reader *r);

enum { FRAME_MORE = 0, FRAME_DONE = 1 };

/*
 * Consumes bytes from *data (advancing *data and *len) until one frame is
 * complete or the input runs out.  Returns FRAME_DONE with *out and *out_len
 * set to the body (malloc'd, NUL-terminated, owned by the caller: free()),
 * FRAME_MORE when all input was consumed without completing a frame, or
 * ERR_LIMIT (e filled, naming the announced size and the limit) when the
 * header announces more than the reader's max: the stream cannot be
 * resynchronised after that.  ERR_NOMEM when the body cannot be allocated.
 */
int frame_reader_feed(struct frame_reader *r, const char **data, size_t *len,
                      char **out, size_t *out_len, struct err *e);

/* Starts a frame at the end of b (appends a placeholder header) and
 * returns the header's offset for frame_end. */
size_t frame_begin(struct buf *b);
/* Patches the header at off with the length of what was appended since.
 * Returns 0, b->failed, or ERR_LIMIT when the body exceeds max. */
int frame_end(struct buf *b, size_t off, size_t max);

/* Reads a big-endian 32-bit length. */
uint32_t frame_get_len(const unsigned char hdr[FRAME_HEADER]);

#endif
