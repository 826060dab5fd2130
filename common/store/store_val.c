/* store_val: a buffered column value and its binding (see store_val.h). */
#include "store/store_val.h"

void store_val_text(struct buf *text, struct store_val *v, const char *s,
                    size_t n)
{
	v->type = SQLITE_TEXT;
	v->off = text->len;
	v->len = n;
	buf_append(text, s, n);
}

void store_val_bind(sqlite3_stmt *st, int p, const char *text,
                    const struct store_val *v)
{
	switch (v->type) {
	case SQLITE_INTEGER: sqlite3_bind_int64(st, p, v->i); break;
	case SQLITE_FLOAT: sqlite3_bind_double(st, p, v->d); break;
	case SQLITE_TEXT:
		sqlite3_bind_text(st, p, text + v->off, (int)v->len, SQLITE_STATIC);
		break;
	default: sqlite3_bind_null(st, p); break;
	}
}
