/* frame: length-prefixed frames (see frame.h). */
#include "frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void frame_reader_init(struct frame_reader *r, size_t max)
{
	r->hdr_len = 0;
	r->need = 0;
	r->max = max;
	buf_init(&r->body, max);
}

void frame_reader_free(struct frame_reader *r)
{
	buf_free(&r->body);
	r->hdr_len = 0;
	r->need = 0;
}

int frame_reader_idle(const struct frame_reader *r)
{
	return r->hdr_len == 0;
}

uint32_t frame_get_len(const unsigned char hdr[FRAME_HEADER])
{
	return (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
	       (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3];
}

static void format_size(char *out, size_t n, size_t v)
{
	if (v >= ((size_t)1 << 20) && v % ((size_t)1 << 20) == 0)
		snprintf(out, n, "%zu MiB", v >> 20);
	else
		snprintf(out, n, "%zu bytes", v);
}

int frame_reader_feed(struct frame_reader *r, const char **data, size_t *len,
                      char **out, size_t *out_len, struct err *e)
{
	while (*len > 0) {
		if (r->hdr_len < FRAME_HEADER) {
			size_t take = FRAME_HEADER - r->hdr_len;
			if (take > *len)
				take = *len;
			memcpy(r->hdr + r->hdr_len, *data, take);
			r->hdr_len += take;
			*data += take;
			*len -= take;
			if (r->hdr_len < FRAME_HEADER)
				return FRAME_MORE;
			r->need = frame_get_len(r->hdr);
			if (r->need > r->max) {
				char lim[32];
				format_size(lim, sizeof lim, r->max);
				return err_set(e, ERR_LIMIT,
				               "Frame length %zu exceeds the %s limit",
				               r->need, lim);
			}
			/* The body grows as its bytes arrive: a claimed length
			 * is never allocated up front. */
			buf_reset(&r->body);
		}
		size_t take = r->need - r->body.len;
		if (take > *len)
			take = *len;
		buf_append(&r->body, *data, take);
		if (r->body.failed)
			return err_set(e, ERR_NOMEM,
			               "Out of memory for a %zu-byte frame", r->need);
		*data += take;
		*len -= take;
		if (r->body.len < r->need)
			return FRAME_MORE;
		/* Complete: hand the body over. */
		size_t n = r->body.len;
		char *p = buf_detach(&r->body, &n);
		if (!p) {
			p = malloc(1);
			if (!p)
				return err_set(e, ERR_NOMEM, "Out of memory");
			p[0] = '\0';
			n = 0;
		}
		buf_init(&r->body, r->max);
		r->hdr_len = 0;
		r->need = 0;
		*out = p;
		*out_len = n;
		return FRAME_DONE;
	}
	return FRAME_MORE;
}

size_t frame_begin(struct buf *b)
{
	size_t off = b->len;
	buf_append(b, "\0\0\0\0", FRAME_HEADER);
	return off;
}

int frame_end(struct buf *b, size_t off, size_t max)
{
	if (b->failed)
		return b->failed;
	size_t n = b->len - off - FRAME_HEADER;
	if (n > max || n > UINT32_MAX)
		return ERR_LIMIT;
	unsigned char *h = (unsigned char *)b->data + off;
	h[0] = (unsigned char)(n >> 24);
	h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8);
	h[3] = (unsigned char)n;
	return 0;
}
