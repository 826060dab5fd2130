/* buf: growable byte buffer with a hard maximum (see buf.h). */
#include "base/buf.h"
#include "base/err.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
	b->failed = 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->data)
		b->data[0] = '\0';
}

int buf_reserve(struct buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return b->failed;
	if (n > (size_t)-1 - b->len - 1)
		return b->failed = ERR_LIMIT;
	need = b->len + n + 1;
	if (b->max && need - 1 > b->max)
		return b->failed = ERR_LIMIT;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return b->failed = ERR_NOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

void buf_append_grow(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc_grow(struct buf *b, char c)
{
	if (buf_reserve(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data;
	if (len)
		*len = b->len;
	buf_init(b, b->max);
	return p;
}

size_t buf_append_utf8(struct buf *b, const char *s, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n;) {
		int invalid;
		size_t k = utf8_next(s + i, n - i, &invalid);
		if (invalid) {
			buf_append(b, "\xEF\xBF\xBD", 3);
			bad++;
		} else {
			buf_append(b, s + i, k);
		}
		i += k;
	}
	return bad;
}
