/*
 * buf: a growable byte buffer with a hard maximum size.
 *
 * Used for JSON text, frames and file contents.  Appends never fail loudly:
 * the first failure (allocation, or growth past `max`) sets the sticky
 * `failed` field (ERR_NOMEM or ERR_LIMIT) and later appends are ignored, so
 * an emitter can check once at the end.  data is always NUL-terminated
 * (when non-NULL) for convenience; len excludes the NUL.
 */
#ifndef DSIGHT_BUF_H
#define DSIGHT_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;  /* 0 = unlimited */
	int failed;  /* 0, ERR_NOMEM or ERR_LIMIT */
};

/* Initializes an empty buffer (no allocation). max 0 = unlimited. */
void buf_init(struct buf *b, size_t max);
/* Frees the storage; b can be reused after buf_init. */
void buf_free(struct buf *b);
/* Empties the buffer, keeping its storage; clears `failed`. */
void buf_reset(struct buf *b);
/* Ensures room for n more bytes; returns 0 or the sticky error. */
int buf_reserve(struct buf *b, size_t n);
/* The slow paths of buf_append and buf_putc below (growth, limits). */
void buf_append_grow(struct buf *b, const void *p, size_t n);
void buf_putc_grow(struct buf *b, char c);
void buf_puts(struct buf *b, const char *s);

/* The JSON emitters call these for every byte they print (tens of millions
 * of numbers in a build), so the common case, room in the buffer, is
 * inline.  The same tests as buf_reserve: not failed, within max. */
static inline void buf_append(struct buf *b, const void *p, size_t n)
{
	if (!b->failed && n < b->cap - b->len && (!b->max || n <= b->max - b->len)) {
		if (n)
			memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
	} else {
		buf_append_grow(b, p, n);
	}
}

static inline void buf_putc(struct buf *b, char c)
{
	if (!b->failed && b->cap - b->len > 1 && (!b->max || b->len < b->max)) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
	} else {
		buf_putc_grow(b, c);
	}
}

void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends s (n bytes) with every invalid UTF-8 sequence replaced by U+FFFD
 * (one per maximal subpart, utf8_next).  Returns the number of
 * replacements; check b->failed for memory. */
size_t buf_append_utf8(struct buf *b, const char *s, size_t n);
/* Hands the storage to the caller (free() it); leaves b empty. Returns
 * NULL for an empty never-allocated buffer. */
char *buf_detach(struct buf *b, size_t *len);

#endif
