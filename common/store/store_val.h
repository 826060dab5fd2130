/*
 * store_val: one column value buffered for an insert, its text held at an
 * offset of the batch's text buffer (offsets survive the buffer's growth,
 * pointers would not), and its binding to a statement parameter.
 */
#ifndef DSIGHT_STORE_VAL_H
#define DSIGHT_STORE_VAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

struct store_val {
	int type; /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT */
	int64_t i;
	double d;
	size_t off, len; /* SQLITE_TEXT: its bytes in the text buffer */
};

/* Makes v the text s[0..n), appended to text (out of memory shows as
 * text->failed). */
void store_val_text(struct buf *text, struct store_val *v, const char *s,
                    size_t n);

/* Binds v to parameter p of st, its text read from text (static: text
 * must outlive the statement's step). */
void store_val_bind(sqlite3_stmt *st, int p, const char *text,
                    const struct store_val *v);

#endif
