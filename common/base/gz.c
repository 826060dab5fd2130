/* gz: gzip members with mtime 0 and OS 255, whole (libdeflate) or
 * streamed (zlib) (see gz.h). */
#include "base/gz.h"
#include "base/vec.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#define GZ_CHUNK ((size_t)256 << 10) /* gz_stream's output piece */

void gz_init(struct gz *g, int level)
{
	memset(g, 0, sizeof *g);
	g->level = level;
}

/* Starts a member: zlib state made or reset, header mtime 0, OS 255.
 * windowBits 15 + 16 asks zlib for a gzip wrapper. */
static int begin(struct gz *g, struct err *e)
{
	if (!g->ready) {
		memset(&g->z, 0, sizeof g->z);
		if (deflateInit2(&g->z, g->level, Z_DEFLATED, 15 + 16, 8,
		                 Z_DEFAULT_STRATEGY) != Z_OK)
			return err_set(e, ERR_NOMEM, "Cannot start gzip compression");
		g->ready = 1;
	} else if (deflateReset(&g->z) != Z_OK) {
		return err_set(e, ERR_DATA, "Cannot reset gzip compression");
	}
	memset(&g->header, 0, sizeof g->header);
	g->header.time = 0;
	g->header.os = 255;
	if (deflateSetHeader(&g->z, &g->header) != Z_OK)
		return err_set(e, ERR_DATA, "Cannot set the gzip header");
	return 0;
}

int gz_member(struct gz *g, const void *data, size_t len, unsigned char **out,
              size_t *cap, size_t *outlen, const char *what, struct err *e)
{
	size_t need, n;

	if (!g->ld && !(g->ld = libdeflate_alloc_compressor(g->level)))
		return err_set(e, g->level < 0 || g->level > 12 ? ERR_DATA
		                                                : ERR_NOMEM,
		               "Cannot start gzip compression of %s (level %d)",
		               what, g->level);
	need = libdeflate_gzip_compress_bound(g->ld, len);
	if (need > *cap) {
		if (vec_resize(out, need, 1))
			return err_set(e, ERR_NOMEM, "Out of memory compressing %s",
			               what);
		*cap = need;
	}
	/* libdeflate writes mtime 0, no name and OS 255 (unknown) */
	n = libdeflate_gzip_compress(g->ld, data, len, *out, *cap);
	if (!n)
		return err_set(e, ERR_DATA, "gzip compression of %s failed", what);
	*outlen = n;
	return 0;
}

int gz_stream(struct gz *g, const void *data, size_t len, int finish,
              gz_write_fn write, void *ctx, const char *what, struct err *e)
{
	int rc;

	if (!g->open) {
		if (!g->chunk && !(g->chunk = malloc(GZ_CHUNK)))
			return err_set(e, ERR_NOMEM, "Out of memory compressing %s",
			               what);
		if ((rc = begin(g, e)))
			return rc;
		g->open = 1;
	}
	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	for (;;) {
		g->z.next_out = g->chunk;
		g->z.avail_out = (uInt)GZ_CHUNK;
		int zrc = deflate(&g->z, finish ? Z_FINISH : Z_NO_FLUSH);
		size_t n = GZ_CHUNK - g->z.avail_out;
		if (zrc == Z_STREAM_ERROR)
			return err_set(e, ERR_DATA, "gzip compression of %s failed",
			               what);
		if (n && (rc = write(ctx, g->chunk, n, e)))
			return rc;
		if (finish ? zrc == Z_STREAM_END : g->z.avail_in == 0)
			break;
	}
	if (finish)
		g->open = 0;
	return 0;
}

void gz_free(struct gz *g)
{
	if (g->ready)
		deflateEnd(&g->z);
	libdeflate_free_compressor(g->ld);
	g->ld = NULL;
	free(g->chunk);
	g->ready = g->open = 0;
	g->chunk = NULL;
}
