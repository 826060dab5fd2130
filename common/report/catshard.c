/* catshard: catalog shards, id lookup shards, top lists and request density
 * from the extension tables (see catshard.h). */
#include "report/catshard.h"
#include "store/store_ext.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "report/catsearch.h"
#include "report/catsum.h"
#include "report/cattime.h"
#include "report/cattop.h"
#include "report/shard.h"
#include "report/shardq.h"

#include <stdio.h>
#include <string.h>

/* The build's map from a catalog id (and kind: 0 request, 1 session) to
 * its shard, a temporary table of the cache's connection (cattop_list
 * reads it through the name passed to it). */
#define IDS_TABLE "temp.catshard_ids"
/* where each request landed (ord, shard, pos): given to cattime_write */
#define POS_TABLE "temp.catshard_pos"
#define SUM_TABLE "temp.catshard_sums"

#define NCOLL 4
static const char *const coll_names[NCOLL] = {"requests", "sessions",
                                              "server_spans", "iterations"};
static const char *const coll_tables[NCOLL] = {
	STORE_EXT_REQUESTS, STORE_EXT_SESSIONS, STORE_EXT_SERVER_SPANS,
	STORE_EXT_ITERATIONS};

int catshard_over_budget(sqlite3 *db, int *over, struct err *e)
{
	uint64_t total = 0;

	*over = 0;
	for (int c = 0; c < NCOLL && !*over; c++) {
		char sql[128];
		sqlite3_stmt *st = NULL;
		uint64_t n = 0;
		int rc;

		snprintf(sql, sizeof sql, "SELECT length(CAST(json AS BLOB)) FROM %s",
		         coll_tables[c]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			return err_set(e, ERR_DATA, "Cannot read %s: %s", coll_tables[c],
			               sqlite3_errmsg(db));
		total += 2; /* [] */
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			total += (uint64_t)sqlite3_column_int64(st, 0) + (n++ ? 1 : 0);
			if (total > CATSHARD_EMBED_MAX) {
				*over = 1;
				break;
			}
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return err_set(e, ERR_DATA, "Cannot read %s: %s", coll_tables[c],
			               sqlite3_errmsg(db));
	}
	return 0;
}

/* ---- cutting ------------------------------------------------------------ */

/* Time bounds [min start, min end, max start, max end] of some rows. */
struct span {
	double b[4];
	int timed;
	int untimed; /* a row without a numeric start: bounds null */
};

/* Rows with their count, per-collection counts and time bounds (of every
 * row, and of the session rows alone). */
struct rows {
	struct buf text;   /* "row,row" (no brackets) */
	uint64_t count;
	uint64_t budget;   /* sum(row length + 1) */
	uint64_t n[NCOLL];
	uint64_t unaligned; /* iterations without a numeric start */
	struct span all, sess;
};

struct cs {
	sqlite3 *db;
	struct shardq *q;  /* writes the shards on a worker thread */
	struct rows cur;   /* the shard being filled */
	struct rows group; /* the group being read */
	struct rows scur, sgroup; /* their request summaries */
	struct rows spack; /* summary shard being filled: [shard, [summaries]] rows */
	json_t *sums;      /* summary shard descriptors */
	int summaries;     /* write request summaries (no irregular column) */
	const char *kind;  /* the current shard's kind */
	struct buf gids;   /* the group's ids: kind byte, id, NUL */
	struct buf gords;  /* the group's request ordinals (int64_t), with summaries */
	sqlite3_stmt *pos_ins; /* into POS_TABLE, with summaries */
	sqlite3_stmt *sum_ins; /* into SUM_TABLE, with summaries */
	struct buf row;
	sqlite3_stmt *ins;
	json_t *shards;
	struct catshard_stats *st;
	struct catsearch search; /* the requests' search text */
	int64_t last[NCOLL];   /* the last ordinal written per collection (-1) */
	int disorder[NCOLL];   /* ordinals decreased */
};

static void rows_reset(struct rows *r)
{
	buf_reset(&r->text);
	r->count = r->budget = 0;
	memset(r->n, 0, sizeof r->n);
	r->unaligned = 0;
	memset(&r->all, 0, sizeof r->all);
	memset(&r->sess, 0, sizeof r->sess);
}

static void bounds_add(struct span *p, double start, double end)
{
	shard_bounds_add(p->b, !p->timed, start, end);
	p->timed = 1;
}

/* Adds one row's times to p (its start only when it has one). */
static void span_row(struct span *p, int untimed, int has_start, double start,
                     double end)
{
	p->untimed |= untimed;
	if (has_start)
		bounds_add(p, start, end);
}

/* Widens p to cover q (untimed when q is or, with untimed_empty, when q
 * holds no timed row). */
static void span_merge(struct span *p, const struct span *q, int untimed_empty)
{
	p->untimed |= q->untimed || (untimed_empty && !q->timed);
	if (q->timed) {
		bounds_add(p, q->b[0], q->b[1]);
		bounds_add(p, q->b[2], q->b[3]);
	}
}

/* bounds (or a null) as the descriptor's key. */
static void span_set(json_t *j, const char *key, const struct span *p)
{
	json_t *a;

	if (!p->timed || p->untimed) {
		json_object_set_new(j, key, json_null());
		return;
	}
	a = json_array();
	for (int k = 0; k < 4; k++)
		json_array_append_new(a, json_real(p->b[k]));
	json_object_set_new(j, key, a);
}

static int is_num(sqlite3_stmt *st, int col)
{
	int t = sqlite3_column_type(st, col);
	return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

/* Appends the row [c, ordinal, json] of the statement's current row
 * (columns: ordinal, id, start, end, json) to r. */
static int rows_add(struct cs *s, struct rows *r, int c, sqlite3_stmt *st,
                    struct err *e)
{
	const char *json = (const char *)sqlite3_column_text(st, 4);
	size_t len = (size_t)sqlite3_column_bytes(st, 4);

	buf_reset(&s->row);
	buf_printf(&s->row, "[%d,%lld,", c, (long long)sqlite3_column_int64(st, 0));
	buf_append(&s->row, json ? json : "null", json ? len : 4);
	buf_putc(&s->row, ']');
	if (r->count)
		buf_putc(&r->text, ',');
	buf_append(&r->text, s->row.data, s->row.len);
	if (s->row.failed || r->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	r->count++;
	r->n[c]++;
	r->budget += s->row.len + 1;
	if (sqlite3_column_int64(st, 0) <= s->last[c])
		s->disorder[c] = 1;
	s->last[c] = sqlite3_column_int64(st, 0);
	/* an iteration without end spans its start; an element of another
	 * collection without numeric end, or any without numeric start, has
	 * no bounds */
	int has_start = is_num(st, 2), has_end = is_num(st, 3);
	double start = has_start ? sqlite3_column_double(st, 2) : 0;
	double end = has_end ? sqlite3_column_double(st, 3) : start;
	int untimed = !has_start || (!has_end && (sqlite3_column_type(st, 3) != SQLITE_NULL || c != 3));
	span_row(&r->all, untimed, has_start, start, end);
	if (c == 1)
		span_row(&r->sess, untimed, has_start, start, end);
	if (c == 3 && !has_start)
		r->unaligned++;
	return 0;
}

/* A request row: ordinal, id, start, end, json (as rows_add reads every
 * collection), its summary columns, then its search text. */
#define REQ_COLS "ordinal, id, start, end, json, " CATSUM_COLS ", search"
#define REQ_SUMMARY 5                  /* the first summary column */
#define REQ_SESSION (REQ_SUMMARY + 1)  /* its session */
#define REQ_SEARCH (REQ_SUMMARY + CATSUM_N) /* the search column */

/* Appends the request summary [ordinal, summary_fields...] of st's row. */
static int summary_add(struct cs *s, sqlite3_stmt *st, struct err *e)
{
	struct rows *r = &s->sgroup;
	size_t before = r->text.len;

	if (r->count)
		buf_putc(&r->text, ',');
	buf_putc(&r->text, '[');
	jsonout_int(&r->text, sqlite3_column_int64(st, 0));
	size_t vals = r->text.len;
	catsum_values(&r->text, st, REQ_SUMMARY);
	buf_putc(&r->text, ']');
	if (r->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	/* kept for the time summaries, which then read no request again */
	sqlite3_bind_int64(s->sum_ins, 1, sqlite3_column_int64(st, 0));
	sqlite3_bind_value(s->sum_ins, 2,
	                   sqlite3_column_value(st, REQ_SUMMARY + CATSUM_START));
	sqlite3_bind_value(s->sum_ins, 3,
	                   sqlite3_column_value(st, REQ_SUMMARY + CATSUM_END));
	sqlite3_bind_text(s->sum_ins, 4, r->text.data + vals,
	                  (int)(r->text.len - 1 - vals), SQLITE_STATIC);
	int rs = sqlite3_step(s->sum_ins);
	sqlite3_reset(s->sum_ins);
	if (rs != SQLITE_DONE)
		return err_set(e, ERR_DATA, "Cannot keep request summaries: %s",
		               sqlite3_errmsg(s->db));
	r->count++;
	r->budget += r->text.len - before;
	return 0;
}

/* Writes the JSON array of r's rows as a shard; its descriptor in *out. */
static int write_rows(struct cs *s, struct rows *r, json_t **out, struct err *e)
{
	struct buf text;
	int rc;

	buf_init(&text, 0);
	buf_putc(&text, '[');
	buf_append(&text, r->text.data, r->text.len);
	buf_putc(&text, ']');
	if (text.failed) {
		buf_free(&text);
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	}
	rc = shardq_add(s->q, text.data, text.len, r->count, r->all.b, out, e);
	buf_free(&text);
	return rc;
}

/* Writes the summary shard being filled (no-op when empty). */
static int flush_summaries(struct cs *s, struct err *e)
{
	json_t *j;
	int rc;

	if (!s->spack.count)
		return 0;
	if ((rc = write_rows(s, &s->spack, &j, e)))
		return rc;
	if (!s->spack.all.timed || s->spack.all.untimed)
		json_object_set_new(j, "bounds", json_null());
	if (json_array_append_new(s->sums, j))
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	rows_reset(&s->spack);
	return 0;
}

/* Adds the summaries of the catalog shard being flushed (r, descriptor j)
 * as the row [shard, [summaries]] of the summary shard being filled,
 * cutting it at the budget; j gets "summary": that summary shard. */
static int pack_summary(struct cs *s, const struct rows *r, json_t *j,
                        struct err *e)
{
	struct rows *p = &s->spack;
	size_t len = s->scur.text.len + 32;
	int rc;

	if (p->count && p->budget + len + 1 + 2 > SHARD_MAX_DECODED &&
	    (rc = flush_summaries(s, e)))
		return rc;
	if (p->count)
		buf_putc(&p->text, ',');
	buf_printf(&p->text, "[%llu,[", (unsigned long long)s->st->shards);
	buf_append(&p->text, s->scur.text.data, s->scur.text.len);
	buf_puts(&p->text, "]]");
	if (p->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	p->count++;
	p->budget += len + 1;
	span_merge(&p->all, &r->all, 1);
	json_object_set_new(j, "summary", json_integer((json_int_t)json_array_size(s->sums)));
	return 0;
}

/* Writes the current shard (no-op when empty). */
static int flush(struct cs *s, struct err *e)
{
	struct rows *r = &s->cur;
	json_t *j;
	int rc;

	if (!r->count)
		return 0;
	if ((rc = write_rows(s, r, &j, e)))
		return rc;
	if (!r->all.timed || r->all.untimed)
		json_object_set_new(j, "bounds", json_null());
	if (r->n[1]) /* the sessions' own bounds: a window query on sessions */
		span_set(j, "session_bounds", &r->sess);
	if (r->n[3]) /* counted apart by a window query on iterations */
		json_object_set_new(j, "unaligned", json_integer((json_int_t)r->unaligned));
	json_object_set_new(j, "kind", json_string(s->kind));
	for (int c = 0; c < NCOLL; c++)
		if (r->n[c])
			json_object_set_new(j, coll_names[c], json_integer((json_int_t)r->n[c]));
	if (s->summaries && s->scur.count && (rc = pack_summary(s, r, j, e))) {
		json_decref(j);
		return rc;
	}
	if (json_array_append_new(s->shards, j))
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	if ((rc = catsearch_shard_end(&s->search, s->st->shards, e)))
		return rc;
	s->st->shards++;
	rows_reset(r);
	rows_reset(&s->scur);
	return 0;
}

/* Moves the group into the current shard per the cut rule and records its
 * ids; a group over the budget gets a shard of its own (label names it). */
static int group_end(struct cs *s, const char *label, uint64_t max_rows,
                     struct err *e)
{
	struct rows *g = &s->group, *r = &s->cur;
	int rc;

	if (!g->count)
		return 0;
	if (r->count && (r->budget + g->budget + 2 > SHARD_MAX_DECODED ||
	                 r->count + g->count > max_rows) && (rc = flush(s, e)))
		return rc;
	if (r->count)
		buf_putc(&r->text, ',');
	buf_append(&r->text, g->text.data, g->text.len);
	if (r->text.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
	r->count += g->count;
	r->budget += g->budget;
	if (s->sgroup.count) {
		if (s->scur.count)
			buf_putc(&s->scur.text, ',');
		buf_append(&s->scur.text, s->sgroup.text.data, s->sgroup.text.len);
		if (s->scur.text.failed)
			return err_set(e, ERR_NOMEM, "Out of memory cutting catalog shards");
		s->scur.count += s->sgroup.count;
		rows_reset(&s->sgroup);
	}
	if ((rc = catsearch_group_end(&s->search, e)))
		return rc;
	for (int c = 0; c < NCOLL; c++)
		r->n[c] += g->n[c];
	r->unaligned += g->unaligned;
	span_merge(&r->all, &g->all, 0);
	span_merge(&r->sess, &g->sess, 0);
	/* ids -> the shard this group lands in */
	for (size_t off = 0; off < s->gids.len;) {
		const char *id = s->gids.data + off + 1;
		size_t n = strlen(id);
		sqlite3_bind_text(s->ins, 1, id, (int)n, SQLITE_STATIC);
		sqlite3_bind_int(s->ins, 2, s->gids.data[off]);
		sqlite3_bind_int64(s->ins, 3, (sqlite3_int64)s->st->shards);
		if (sqlite3_step(s->ins) != SQLITE_DONE) {
			rc = err_set(e, ERR_DATA, "Cannot index catalog ids: %s",
			             sqlite3_errmsg(s->db));
			sqlite3_reset(s->ins);
			return rc;
		}
		sqlite3_reset(s->ins);
		off += n + 2;
	}
	buf_reset(&s->gids);
	/* request ordinals -> shard and position (the time summaries) */
	for (size_t k = 0; s->pos_ins && k < s->gords.len / sizeof(int64_t); k++) {
		int64_t ord;
		memcpy(&ord, s->gords.data + k * sizeof ord, sizeof ord);
		sqlite3_bind_int64(s->pos_ins, 1, ord);
		sqlite3_bind_int64(s->pos_ins, 2, (sqlite3_int64)s->st->shards);
		sqlite3_bind_int64(s->pos_ins, 3, (sqlite3_int64)(r->n[0] - g->n[0] + k));
		rc = sqlite3_step(s->pos_ins) != SQLITE_DONE;
		sqlite3_reset(s->pos_ins);
		if (rc)
			return err_set(e, ERR_DATA, "Cannot index request positions: %s",
			               sqlite3_errmsg(s->db));
	}
	buf_reset(&s->gords);
	if (g->budget + 2 > SHARD_MAX_DECODED) {
		if (!s->st->oversized++)
			snprintf(s->st->warning, sizeof s->st->warning,
			         "%s holds %.1f KiB of catalog JSON, over the %u KiB "
			         "catalog shard budget: it gets a shard of its own",
			         label, (double)(g->budget + 2) / 1024.0,
			         SHARD_MAX_DECODED / 1024u);
		if ((rc = flush(s, e)))
			return rc;
	}
	rows_reset(g);
	return 0;
}

/* Adds the current row of st (ordinal, id, start, end, json) to the group
 * and remembers its id (kind 0 request, 1 session) when it has one. */
static int group_add(struct cs *s, int c, sqlite3_stmt *st, struct err *e)
{
	const char *id = (const char *)sqlite3_column_text(st, 1);

	int rc;

	if (id && c <= 1 && sqlite3_column_type(st, 1) == SQLITE_TEXT) {
		buf_putc(&s->gids, (char)c);
		buf_append(&s->gids, id, (size_t)sqlite3_column_bytes(st, 1) + 1);
	}
	if (c == 0 && s->summaries) {
		int64_t ord = sqlite3_column_int64(st, 0);
		buf_append(&s->gords, &ord, sizeof ord);
		if ((rc = summary_add(s, st, e)))
			return rc;
	}
	if (c == 0) {
		const void *blob = sqlite3_column_blob(st, REQ_SEARCH);
		if ((rc = catsearch_add(&s->search, blob,
		                        (size_t)sqlite3_column_bytes(st, REQ_SEARCH), e)))
			return rc;
	}
	return rows_add(s, &s->group, c, st, e);
}

static int prep(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct err *e)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "Cannot read the catalog tables: %s",
		               sqlite3_errmsg(db));
	return 0;
}

static int step_error(sqlite3 *db, struct err *e)
{
	return err_set(e, ERR_DATA, "Cannot read the catalog tables: %s",
	               sqlite3_errmsg(db));
}

/* Session groups in session start order, then the requests whose session
 * is not in `sessions` (grouped by their session value; a request without
 * one is a group by itself). */
static int write_sessions(struct cs *s, struct err *e)
{
	sqlite3_stmt *ss = NULL, *rq = NULL, *seen = NULL, *orph = NULL;
	char label[200];
	int rc, rs;

	s->kind = "sessions";
	if ((rc = prep(s->db, "SELECT ordinal, id, start, end, json FROM " STORE_EXT_SESSIONS " "
	               "ORDER BY start, ordinal", &ss, e)) ||
	    (rc = prep(s->db, "SELECT " REQ_COLS " FROM " STORE_EXT_REQUESTS " "
	               "WHERE session = ?1 ORDER BY ordinal", &rq, e)) ||
	    (rc = prep(s->db, "SELECT 1 FROM " IDS_TABLE " WHERE id = ?1 AND kind = 1",
	               &seen, e)) ||
	    (rc = prep(s->db, "SELECT " REQ_COLS " "
	               "FROM " STORE_EXT_REQUESTS " r WHERE r.session IS NULL OR NOT EXISTS "
	               "(SELECT 1 FROM " STORE_EXT_SESSIONS " x WHERE x.id = r.session) "
	               "ORDER BY r.session IS NULL, r.session, r.ordinal", &orph, e)))
		goto out;
	while ((rs = sqlite3_step(ss)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(ss, 1);
		int dup = 0;
		if (id) {
			sqlite3_bind_text(seen, 1, id, -1, SQLITE_TRANSIENT);
			dup = sqlite3_step(seen) == SQLITE_ROW;
			sqlite3_reset(seen);
		}
		snprintf(label, sizeof label, "session %.150s", id ? id : "(without id)");
		if ((rc = group_add(s, 1, ss, e)))
			goto out;
		if (id && !dup) {
			sqlite3_bind_text(rq, 1, id, -1, SQLITE_TRANSIENT);
			while ((rs = sqlite3_step(rq)) == SQLITE_ROW)
				if ((rc = group_add(s, 0, rq, e)))
					goto out;
			sqlite3_reset(rq);
			if (rs != SQLITE_DONE) {
				rc = step_error(s->db, e);
				goto out;
			}
		}
		if ((rc = group_end(s, label, UINT64_MAX, e)))
			goto out;
	}
	if (rs != SQLITE_DONE) {
		rc = step_error(s->db, e);
		goto out;
	}
	/* orphans */
	struct buf prev;
	int have = 0;
	buf_init(&prev, 0);
	while ((rs = sqlite3_step(orph)) == SQLITE_ROW) {
		const char *sess = (const char *)sqlite3_column_text(orph, REQ_SESSION);
		size_t n = (size_t)sqlite3_column_bytes(orph, REQ_SESSION);
		if (have && (!sess || prev.len != n + 1 || memcmp(prev.data + 1, sess, n))) {
			if ((rc = group_end(s, label, UINT64_MAX, e)))
				break;
		}
		buf_reset(&prev);
		buf_putc(&prev, 'x');
		if (sess)
			buf_append(&prev, sess, n);
		else
			buf_putc(&prev, '\0'); /* never equal: alone */
		have = 1;
		snprintf(label, sizeof label, "the requests of session %.150s",
		         sess ? sess : "(none)");
		if ((rc = group_add(s, 0, orph, e)))
			break;
	}
	buf_free(&prev);
	if (!rc && rs != SQLITE_DONE && rs != SQLITE_ROW)
		rc = step_error(s->db, e);
	if (!rc)
		rc = group_end(s, label, UINT64_MAX, e);
	if (!rc)
		rc = flush(s, e);
	if (!rc)
		rc = flush_summaries(s, e);
out:
	sqlite3_finalize(ss);
	sqlite3_finalize(rq);
	sqlite3_finalize(seen);
	sqlite3_finalize(orph);
	return rc;
}

/* Server spans or iterations by time, cut like detail rows. */
static int write_timed(struct cs *s, int c, struct err *e)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int rc, rs;

	s->kind = coll_names[c];
	snprintf(sql, sizeof sql, "SELECT ordinal, NULL, start, end, json FROM %s "
	         "ORDER BY start, ordinal", coll_tables[c]);
	if ((rc = prep(s->db, sql, &st, e)))
		return rc;
	while ((rs = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = rows_add(s, &s->group, c, st, e)) ||
		    (rc = group_end(s, "a row", SHARD_MAX_ROWS, e)))
			break;
	if (!rc && rs != SQLITE_DONE)
		rc = step_error(s->db, e);
	if (!rc)
		rc = flush(s, e);
	sqlite3_finalize(st);
	return rc;
}

/* The id lookup shards: rows [id, kind, shard] by id (code point order:
 * SQLite compares UTF-8 bytes), then kind. */
static int write_lookup(struct cs *s, json_t *lookup, struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct buf text, first;
	uint64_t count = 0, budget = 2;
	int rc, rs;

	if ((rc = prep(s->db, "SELECT id, kind, shard FROM " IDS_TABLE " "
	               "ORDER BY id, kind", &st, e)))
		return rc;
	buf_init(&text, 0);
	buf_init(&first, 0);
	for (;;) {
		rs = sqlite3_step(st);
		if (rs == SQLITE_ROW) {
			buf_reset(&s->row);
			buf_putc(&s->row, '[');
			jsonout_str(&s->row, (const char *)sqlite3_column_text(st, 0),
			            (size_t)sqlite3_column_bytes(st, 0));
			buf_printf(&s->row, ",%d,%lld]", sqlite3_column_int(st, 1),
			           (long long)sqlite3_column_int64(st, 2));
		}
		if (count && (rs != SQLITE_ROW || budget + s->row.len + 1 > SHARD_MAX_DECODED)) {
			static const double none[4];
			json_t *j;
			buf_putc(&text, ']');
			if (text.failed) {
				rc = err_set(e, ERR_NOMEM, "Out of memory writing id lookup shards");
				break;
			}
			if ((rc = shardq_add(s->q, text.data, text.len, count, none, &j, e)))
				break;
			json_object_del(j, "bounds");
			json_object_set_new(j, "first", json_stringn(first.data, first.len));
			json_array_append_new(lookup, j);
			s->st->lookups++;
			buf_reset(&text);
			count = 0;
			budget = 2;
		}
		if (rs != SQLITE_ROW)
			break;
		if (!count) {
			buf_reset(&first);
			buf_append(&first, sqlite3_column_text(st, 0),
			           (size_t)sqlite3_column_bytes(st, 0));
		}
		buf_putc(&text, count ? ',' : '[');
		buf_append(&text, s->row.data, s->row.len);
		count++;
		budget += s->row.len + 1;
	}
	if (!rc && rs != SQLITE_DONE)
		rc = step_error(s->db, e);
	buf_free(&text);
	buf_free(&first);
	sqlite3_finalize(st);
	return rc;
}

static json_t *counts_json(json_t *shards)
{
	json_t *c = json_object(), *d;
	json_int_t n[NCOLL] = {0};
	size_t i;

	json_array_foreach(shards, i, d)
		for (int k = 0; k < NCOLL; k++)
			n[k] += json_integer_value(json_object_get(d, coll_names[k]));
	for (int k = 0; k < NCOLL; k++)
		json_object_set_new(c, coll_names[k], json_integer(n[k]));
	return c;
}

/* Request summaries are exact only when no request column is irregular
 * (dsight_meta irregular.requests empty): their typed columns then hold
 * every value the summary carries. */
static int summaries_ok(sqlite3 *db, int *ok, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*ok = 1;
	if ((rc = prep(db, "SELECT value FROM dsight_meta WHERE key = 'irregular.requests'",
	               &st, e)))
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0)
		*ok = 0;
	sqlite3_finalize(st);
	return 0;
}

int catshard_write(sqlite3 *db, const char *dir, double duration,
                   json_t **index, struct catshard_stats *st, struct err *e)
{
	struct cs s;
	json_t *ix = json_object(), *lookup = json_array(), *tf = json_array(),
	       *tt = json_array(), *td = json_array(), *dens = json_array(),
	       *search = NULL, *times = json_array();
	int rc;

	*index = NULL;
	memset(st, 0, sizeof *st);
	memset(&s, 0, sizeof s);
	for (int c = 0; c < NCOLL; c++)
		s.last[c] = -1; /* ordinals count from 0 */
	s.db = db;

	s.st = st;
	s.shards = json_array();
	buf_init(&s.cur.text, 0);
	buf_init(&s.group.text, 0);
	buf_init(&s.scur.text, 0);
	buf_init(&s.spack.text, 0);
	s.sums = json_array();
	buf_init(&s.sgroup.text, 0);
	buf_init(&s.gids, 0);
	buf_init(&s.gords, 0);
	buf_init(&s.row, 0);
	if ((rc = shardq_open(dir, &s.q, e)))
		goto out;
	catsearch_init(&s.search, s.q);
	if ((rc = summaries_ok(db, &s.summaries, e)))
		goto out;
	if (sqlite3_exec(db, "DROP TABLE IF EXISTS " IDS_TABLE ";"
	                 "CREATE TABLE " IDS_TABLE " (id TEXT, kind INTEGER, "
	                 "shard INTEGER, PRIMARY KEY (id, kind)) WITHOUT ROWID",
	                 NULL, NULL, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot create the id table: %s",
		             sqlite3_errmsg(db));
		goto out;
	}
	/* start and end have no affinity: each keeps the type it has in the
	 * requests' table, and so its place in ORDER BY start */
	if (s.summaries &&
	    (sqlite3_exec(db, "DROP TABLE IF EXISTS " POS_TABLE ";"
	                  "CREATE TABLE " POS_TABLE " (ord INTEGER PRIMARY KEY, "
	                  "shard INTEGER, pos INTEGER);"
	                  "DROP TABLE IF EXISTS " SUM_TABLE ";"
	                  "CREATE TABLE " SUM_TABLE " (ord INTEGER PRIMARY KEY, "
	                  "start, end, sum TEXT)", NULL, NULL, NULL) != SQLITE_OK ||
	     (rc = prep(db, "INSERT INTO " POS_TABLE " (ord, shard, pos) "
	                "VALUES (?1, ?2, ?3)", &s.pos_ins, e)) ||
	     (rc = prep(db, "INSERT INTO " SUM_TABLE " (ord, start, end, sum) "
	                "VALUES (?1, ?2, ?3, ?4)", &s.sum_ins, e)))) {
		if (!rc)
			rc = err_set(e, ERR_DATA, "Cannot create the position table: %s",
			             sqlite3_errmsg(db));
		goto out;
	}
	/* One transaction: a temporary table's insert in autocommit is a
	 * commit each (the page cache scanned per request: 10 % of the web
	 * phase of 50,000 requests), and the reads see one snapshot. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot begin the catalog's reads: %s",
		             sqlite3_errmsg(db));
		goto out;
	}
	if ((rc = prep(db, "INSERT OR IGNORE INTO " IDS_TABLE " (id, kind, shard) "
	               "VALUES (?1, ?2, ?3)", &s.ins, e)) ||
	    (rc = write_sessions(&s, e)) ||
	    (s.summaries &&
	     (rc = cattime_write(db, POS_TABLE, SUM_TABLE, s.q, times, e))) ||
	    (rc = catsearch_finish(&s.search, &search, e)) ||
	    (rc = write_timed(&s, 2, e)) ||
	    (rc = write_timed(&s, 3, e)) ||
	    (rc = write_lookup(&s, lookup, e)) ||
	    (rc = cattop_list(db, "ttft_ms", IDS_TABLE, CATSHARD_TOP, tt, e)) ||
	    (rc = cattop_list(db, "duration", IDS_TABLE, CATSHARD_TOP, td, e)) ||
	    (rc = cattop_density(db, duration, dens, e)) ||
	    (rc = shardq_finish(s.q, e)))
		goto out;
	cattop_fields(tf);
	/* ix takes each value (json_object_set_new frees it on failure too),
	 * so the one exit below frees only what ix does not hold */
	int bad = 0;
	if (s.summaries) {
		json_t *a = json_array();
		catsum_fields(a);
		bad |= json_object_set_new(ix, "summary_fields", a);
		bad |= json_object_set(ix, "summaries", s.sums);
		bad |= json_object_set(ix, "time_summaries", times);
	}
	bad |= json_object_set_new(ix, "version", json_integer(1));
	bad |= json_object_set_new(ix, "counts", counts_json(s.shards));
	{
		json_t *o = json_object();
		for (int c = 0; c < NCOLL; c++)
			bad |= json_object_set_new(o, coll_names[c], json_boolean(!s.disorder[c]));
		bad |= json_object_set_new(ix, "ordinal_order", o);
	}
	bad |= json_object_set_new(ix, "shards", s.shards);
	bad |= json_object_set_new(ix, "lookup", lookup);
	bad |= json_object_set_new(ix, "search", search);
	bad |= json_object_set_new(ix, "top_fields", tf);
	bad |= json_object_set_new(ix, "top_ttft", tt);
	bad |= json_object_set_new(ix, "top_duration", td);
	bad |= json_object_set_new(ix, "density", dens);
	s.shards = lookup = search = tf = tt = td = dens = NULL;
	if (bad) {
		rc = err_set(e, ERR_NOMEM, "Out of memory for the catalog index");
		goto out;
	}
	*index = ix;
	ix = NULL;
out:
	json_decref(s.shards);
	json_decref(lookup);
	json_decref(tf);
	json_decref(tt);
	json_decref(td);
	json_decref(dens);
	json_decref(ix);
	json_decref(search);
	catsearch_free(&s.search);
	shardq_free(s.q);
	sqlite3_finalize(s.ins);
	sqlite3_finalize(s.pos_ins);
	sqlite3_finalize(s.sum_ins);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_exec(db, "DROP TABLE IF EXISTS " IDS_TABLE ";"
	             "DROP TABLE IF EXISTS " POS_TABLE ";"
	             "DROP TABLE IF EXISTS " SUM_TABLE, NULL, NULL, NULL);
	json_decref(times);
	buf_free(&s.cur.text);
	buf_free(&s.group.text);
	buf_free(&s.scur.text);
	buf_free(&s.spack.text);
	json_decref(s.sums);
	buf_free(&s.sgroup.text);
	buf_free(&s.gids);
	buf_free(&s.gords);
	buf_free(&s.row);
	return rc;
}
