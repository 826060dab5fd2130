/* cattime: request summaries in start order (see cattime.h). */
#include "report/cattime.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "report/shard.h"
#include "report/shardq.h"

#include <string.h>

/* The shard being filled: its rows' text, count, budget and bounds. */
struct tcut {
	struct buf text; /* "[row,row" (no closing bracket) */
	uint64_t count, budget;
	double b[4];
	int timed;   /* b holds a row's times */
	int untimed; /* a row lacks a numeric start or end: bounds null */
};

static int num(sqlite3_stmt *st, int col)
{
	int t = sqlite3_column_type(st, col);
	return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

/* Writes the shard being filled (no-op when empty). */
static int cut(struct tcut *c, struct shardq *q, json_t *out, struct err *e)
{
	json_t *j;
	int rc;

	if (!c->count)
		return 0;
	buf_putc(&c->text, ']');
	if (c->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory writing the time summaries");
	if ((rc = shardq_add(q, c->text.data, c->text.len, c->count, c->b, &j, e)))
		return rc;
	if (c->untimed || !c->timed)
		json_object_set_new(j, "bounds", json_null());
	if (json_array_append_new(out, j))
		return err_set(e, ERR_NOMEM, "Out of memory writing the time summaries");
	buf_reset(&c->text);
	c->count = c->budget = 0;
	c->timed = c->untimed = 0;
	return 0;
}

/* Adds st's row (text in row) to the shard, cutting before it when it
 * would pass the budget. */
static int add(struct tcut *c, sqlite3_stmt *st, const struct buf *row,
               struct shardq *q, json_t *out, struct err *e)
{
	const int s = 4, en = 5; /* the row's start and end */
	int rc;

	if (c->count && c->budget + row->len + 1 + 2 > SHARD_MAX_DECODED &&
	    (rc = cut(c, q, out, e)))
		return rc;
	buf_putc(&c->text, c->count ? ',' : '[');
	buf_append(&c->text, row->data, row->len);
	if (c->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory writing the time summaries");
	if (!num(st, s) || !num(st, en)) {
		c->untimed = 1;
	} else {
		shard_bounds_add(c->b, !c->timed, sqlite3_column_double(st, s),
		                 sqlite3_column_double(st, en));
		c->timed = 1;
	}
	c->count++;
	c->budget += row->len + 1;
	return 0;
}

int cattime_write(sqlite3 *db, const char *pos, const char *sums,
                  struct shardq *q, json_t *out, struct err *e)
{
	char *sql = sqlite3_mprintf(
		"SELECT p.shard, p.pos, p.ord, m.sum, m.start, m.end "
		"FROM %s p JOIN %s m ON m.ord = p.ord ORDER BY m.start, m.ord",
		pos, sums);
	struct tcut c;
	struct buf row;
	sqlite3_stmt *st = NULL;
	int rc = 0, rs;

	memset(&c, 0, sizeof c);
	buf_init(&c.text, 0);
	buf_init(&row, 0);
	if (!sql) {
		rc = err_set(e, ERR_NOMEM, "Out of memory writing the time summaries");
		goto out;
	}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot read the requests for the time summaries: %s",
		             sqlite3_errmsg(db));
		goto out;
	}
	while ((rs = sqlite3_step(st)) == SQLITE_ROW) {
		buf_reset(&row);
		buf_putc(&row, '[');
		for (int k = 0; k < 3; k++) {
			if (k)
				buf_putc(&row, ',');
			jsonout_int(&row, sqlite3_column_int64(st, k));
		}
		buf_append(&row, sqlite3_column_text(st, 3),
		           (size_t)sqlite3_column_bytes(st, 3));
		buf_putc(&row, ']');
		if (row.failed) {
			rc = err_set(e, ERR_NOMEM, "Out of memory writing the time summaries");
			break;
		}
		if ((rc = add(&c, st, &row, q, out, e)))
			break;
	}
	if (!rc && rs != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "Cannot read the requests for the time summaries: %s",
		             sqlite3_errmsg(db));
	if (!rc)
		rc = cut(&c, q, out, e);
out:
	sqlite3_free(sql);
	sqlite3_finalize(st);
	buf_free(&c.text);
	buf_free(&row);
	return rc;
}
