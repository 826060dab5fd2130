/* evparse_impl: the parse state's path and error helpers shared by
 * evparse.c and evcheck.c (see evparse_impl.h). */
#include "ingest/evparse_impl.h"
#include "base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void put_key(struct buf *b, const char *k, size_t n, int first)
{
	if (!first)
		buf_putc(b, '.');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k[i];
		buf_putc(b, c < 0x20 || c == 0x7f ? '?' : (char)c);
	}
}

/* The path of frame `upto - 1` (and of its current element when cur). */
const char *evparse_path_of(struct evparse *p, int upto, int cur)
{
	struct buf *b = &p->path;

	buf_reset(b);
	for (int i = 1; i <= upto; i++) {
		if (i == upto && !cur)
			break;
		const struct frame *f = &p->fr[i - 1];
		if (i > p->depth)
			break;
		if (f->is_obj)
			put_key(b, p->keys[i - 1].data ? p->keys[i - 1].data : "",
			        p->keys[i - 1].len, b->len == 0);
		else
			buf_printf(b, "[%lld]", (long long)(f->role >= R_EVENT ? p->row.k : f->index));
	}
	return b->data ? b->data : "";
}

static int failv(struct evparse *p, const char *path, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof msg, fmt, ap);
	if (path && strlen(path) > 240) /* keep the message one readable line */
		err_set(p->e, ERR_DATA, "%s: %.*s...%s%s%s", p->file,
		        (int)utf8_cut(path, strlen(path), 100), path,
		        path + utf8_tail(path, strlen(path), 100),
		        msg[0] == '.' || msg[0] == '[' ? "" : ": ", msg);
	else if (path && *path)
		err_set(p->e, ERR_DATA, "%s: %s%s%s", p->file, path,
		        msg[0] == '.' || msg[0] == '[' ? "" : ": ", msg);
	else
		err_set(p->e, ERR_DATA, "%s: %s", p->file, msg);
	p->rc = ERR_DATA;
	return 0; /* the callback return that cancels yajl */
}

__attribute__((format(printf, 3, 4)))
int evparse_fail(struct evparse *p, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(p, path, fmt, ap);
	va_end(ap);
	return 0;
}

int evparse_nomem(struct evparse *p)
{
	err_set(p->e, ERR_NOMEM, "%s: out of memory", p->file);
	p->rc = ERR_NOMEM;
	return 0;
}

/* A short printable rendering of a user string for messages. */
void evparse_quoted(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0, m = cap > 4 ? utf8_cut(s, n, cap - 5) : 0;
	for (size_t i = 0; i < m; i++) {
		unsigned char c = (unsigned char)s[i];
		out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (m < n)
		memcpy(out + o, "...", 3), o += 3;
	out[o] = '\0';
}

int64_t evparse_array_size_of(json_t *obj, const char *key)
{
	json_t *a = obj ? json_object_get(obj, key) : NULL;
	return json_is_array(a) ? (int64_t)json_array_size(a) : -1;
}
