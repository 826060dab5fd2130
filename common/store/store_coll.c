/* store_coll: the extension tables, read (see store_coll.h). */
#include "store/store_coll.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/vec.h"
#include "store/store_check.h"
#include "store/store_elem.h"
#include "store/store_ext.h"

struct store_coll {
	sqlite3 *db;
	const char *path;
	struct store_meta meta; /* dsight_meta */
	int search_index; /* dsight_requests_search is there */
	sqlite3_stmt *gen, *by_id, *at[EVIDENCE_NCOLLECTIONS];
};

/* A statement on what failed: SQLite's message, or when SQLite saw no
 * error (a row that should be there is not), says so. */
static int c_fail(struct store_coll *c, struct err *e, const char *what)
{
	int code = sqlite3_errcode(c->db);
	if (code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE)
		return err_set(e, ERR_DATA, "%s: cannot read %s: a row it "
		               "should hold is missing; the report was altered: "
		               "rebuild it", c->path, what);
	return err_set(e, ERR_DATA, "%s: cannot read %s: %s", c->path, what,
	               sqlite3_errmsg(c->db));
}

void store_coll_close(struct store_coll *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->gen);
	sqlite3_finalize(c->by_id);
	for (int k = 0; k < EVIDENCE_NCOLLECTIONS; k++)
		sqlite3_finalize(c->at[k]);
	store_check_meta_free(&c->meta);
	free(c);
}

static int prep(struct store_coll *c, sqlite3_stmt **st, const char *sql)
{
	return sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
	                          NULL) == SQLITE_OK ? 0 : -1;
}

int store_coll_open(struct store *s, const char *catalog_generation,
                    struct store_coll **out, json_t **core, int *stale,
                    struct err *e)
{
	struct store_coll *c;
	sqlite3_stmt *st = NULL;
	int match = 0, has = 0;
	char sql[128], bad[64];

	*out = NULL;
	*core = NULL;
	*stale = 0;
	if (sqlite3_prepare_v2(store_db(s), "SELECT 1 FROM sqlite_master WHERE "
	                       "type = 'table' AND name = 'dsight_meta'", -1, &st,
	                       NULL) == SQLITE_OK)
		has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!has)
		return 0;
	c = calloc(1, sizeof *c);
	if (!c)
		return err_set(e, ERR_NOMEM, "out of memory");
	c->db = store_db(s);
	c->path = store_path(s);
	if (store_check_read_meta(c->db, catalog_generation, &c->meta, &match,
	                          bad, sizeof bad) || !match)
		goto stale;
	if (store_check_meta(c->db, c->path, &c->meta, bad, e)) {
		store_coll_close(c);
		return e->code;
	}
	if (prep(c, &c->gen, "SELECT value FROM dsight_meta WHERE key = 'generation'") ||
	    prep(c, &c->by_id, "SELECT json FROM " STORE_EXT_REQUESTS " WHERE id = ?1"
	                       " ORDER BY ordinal LIMIT 1"))
		goto stale;
	for (int k = 0; k < EVIDENCE_NCOLLECTIONS; k++) {
		snprintf(sql, sizeof sql, "SELECT json FROM %s WHERE ordinal = ?1",
		         store_ext_table(k));
		if (prep(c, &c->at[k], sql))
			goto stale;
	}
	if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM sqlite_master WHERE type ="
	                       " 'index' AND name = '" STORE_EXT_SEARCH_INDEX "'", -1,
	                       &st, NULL) == SQLITE_OK)
		c->search_index = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(c->db, "SELECT json FROM dsight_core", -1, &st,
	                       NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		goto stale;
	}
	*core = store_elem_parse((const char *)sqlite3_column_text(st, 0),
	              sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
	if (!json_is_object(*core)) {
		json_decref(*core);
		*core = NULL;
		goto stale;
	}
	*out = c;
	return 0;
stale:
	store_coll_close(c);
	*stale = 1;
	return 0;
}

int store_coll_has(const struct store_coll *c, enum evidence_collection k)
{
	return c && c->meta.count[k] > 0;
}

int64_t store_coll_count(const struct store_coll *c, enum evidence_collection k)
{
	return c ? c->meta.count[k] : 0;
}

int store_coll_check_generation(struct store_coll *c, const char *generation,
                                struct err *e)
{
	int rc, same = 0;

	sqlite3_reset(c->gen);
	rc = sqlite3_step(c->gen);
	if (rc == SQLITE_ROW) {
		const char *g = (const char *)sqlite3_column_text(c->gen, 0);
		same = g && !strcmp(g, generation);
	}
	sqlite3_reset(c->gen);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return c_fail(c, e, "dsight_meta");
	if (!same)
		return err_set(e, ERR_REBUILT,
		               "DSight dataset was rebuilt; reopen it before "
		               "querying");
	return 0;
}

/* Where the elements of collection k read in one shape go (all borrowed);
 * got counts the rows run_page read. */
struct sink {
	struct store_coll *c;
	int k;
	enum store_shape shape;
	store_elem_fn fn;
	void *ctx;
	int64_t got;
};

/* Parses column col of st (a row of s->k), checks it and calls s->fn. */
static int call_with(const struct sink *s, sqlite3_stmt *st, int col,
                     int64_t ordinal, struct err *e)
{
	struct store_coll *c = s->c;
	json_t *el;
	int rc = store_elem_read(st, col, s->shape, c->path,
	                         store_ext_table(s->k), &el, e);

	if (rc)
		return rc;
	rc = store_check_element(c->path, s->k, c->meta.irregular[s->k],
	                         s->shape, el, e);
	if (!rc)
		rc = s->fn(s->ctx, ordinal, el);
	json_decref(el);
	return rc;
}

int store_coll_foreach(struct store_coll *c, enum evidence_collection k,
                       store_elem_fn fn, void *ctx, struct err *e)
{
	const struct sink to = {c, (int)k, STORE_WHOLE, fn, ctx, 0};
	char sql[96];
	sqlite3_stmt *st = NULL;
	int rc = 0, s;

	snprintf(sql, sizeof sql, "SELECT ordinal, json FROM %s ORDER BY ordinal",
	         store_ext_table(k));
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
		return c_fail(c, e, store_ext_table(k));
	while ((s = sqlite3_step(st)) == SQLITE_ROW &&
	       !(rc = call_with(&to, st, 1, sqlite3_column_int64(st, 0), e)))
		;
	if (!rc && s != SQLITE_DONE)
		rc = c_fail(c, e, store_ext_table(k));
	sqlite3_finalize(st);
	return rc;
}

int store_coll_request(struct store_coll *c, const char *id, size_t n,
                       json_t **out, struct err *e)
{
	const json_t *jid;
	int rc;

	*out = NULL;
	sqlite3_reset(c->by_id);
	sqlite3_bind_text(c->by_id, 1, id, (int)n, SQLITE_STATIC);
	rc = sqlite3_step(c->by_id);
	if (rc == SQLITE_ROW)
		*out = store_elem_parse((const char *)sqlite3_column_text(c->by_id, 0),
		             sqlite3_column_bytes(c->by_id, 0));
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		c_fail(c, e, STORE_EXT_REQUESTS);
		sqlite3_reset(c->by_id);
		return e->code;
	}
	sqlite3_reset(c->by_id);
	if (rc == SQLITE_DONE)
		return 0;
	/* the row found by its id column must be that request */
	if (!*out)
		return err_set(e, ERR_DATA, "%s: dsight_requests: the row of "
		               "request %.*s is not valid JSON; the report was "
		               "altered: rebuild it", c->path, (int)(n > 200 ? 200 : n),
		               id);
	rc = store_check_element(c->path, EVIDENCE_REQUESTS,
	                         c->meta.irregular[EVIDENCE_REQUESTS], STORE_WHOLE,
	                         *out, e);
	jid = json_object_get(*out, "id");
	if (!rc && json_is_string(jid) && (json_string_length(jid) != n ||
	                                   memcmp(json_string_value(jid), id, n)))
		rc = err_set(e, ERR_DATA, "%s: dsight_requests: the row whose id "
		             "column is %.*s holds another request; the report was "
		             "altered: rebuild it", c->path, (int)(n > 200 ? 200 : n),
		             id);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int store_coll_names(struct store_coll *c, enum store_names which,
                     int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
                     struct err *e)
{
	static const char *const sql[] = {
		[SN_REQ_SESSION] = "SELECT session FROM " STORE_EXT_REQUESTS " WHERE session IS NOT NULL"
		                   " GROUP BY session ORDER BY min(ordinal)",
		[SN_REQ_AGENT] = "SELECT agent FROM " STORE_EXT_REQUESTS " WHERE agent IS NOT NULL"
		                 " GROUP BY agent ORDER BY min(ordinal)",
		[SN_REQ_WORKER] = "SELECT worker FROM " STORE_EXT_REQUEST_WORKERS
		                  " GROUP BY worker ORDER BY min(rowid)",
		[SN_SESS_ID] = "SELECT id FROM " STORE_EXT_SESSIONS " WHERE id IS NOT NULL"
		               " GROUP BY id ORDER BY min(ordinal)",
		[SN_SESS_AGENT] = "SELECT agent FROM " STORE_EXT_SESSION_AGENTS
		                  " GROUP BY agent ORDER BY min(rowid)",
	};
	sqlite3_stmt *st = NULL;
	int rc = 0, s;

	if (sqlite3_prepare_v2(c->db, sql[which], -1, &st, NULL) != SQLITE_OK)
		return c_fail(c, e, "the request tables");
	while ((s = sqlite3_step(st)) == SQLITE_ROW &&
	       !(rc = fn(ctx, (const char *)sqlite3_column_text(st, 0),
	                 (size_t)sqlite3_column_bytes(st, 0))))
		;
	if (!rc && s != SQLITE_DONE)
		rc = c_fail(c, e, "the request tables");
	sqlite3_finalize(st);
	return rc;
}

/* ---- selections ---------------------------------------------------------- */

/* Whether column name of k is irregular (some element holds a value of an
 * unexpected type there) or k holds a non-object element. */
static int irregular(const struct store_coll *c, int k, const char *name)
{
	char pat[64];
	const char *irr = c->meta.irregular[k];
	if (!irr || strstr(irr, ",*,"))
		return 1;
	snprintf(pat, sizeof pat, ",%s,", name);
	return strstr(irr, pat) != NULL;
}

/* A sort key's column: the key names its column in every table. */
static int sortable(int k, const char *key)
{
	size_t n;
	const struct ext_col *cols = store_ext_columns(k, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cols[i].name, key) && cols[i].indexed)
			return 1;
	return !strcmp(key, "start") || !strcmp(key, "end");
}

struct q {
	struct buf where; /* " AND ..." terms */
	sqlite3_value *dummy;
	/* bindings, in order of the ?s */
	int nb;
	struct bind { int type; double d; int64_t i; const char *s; size_t n; } b[256];
};

static void bind_d(struct q *q, double d)
{
	if (q->nb < 256)
		q->b[q->nb++] = (struct bind){SQLITE_FLOAT, d, 0, NULL, 0};
}

static void bind_i(struct q *q, int64_t i)
{
	if (q->nb < 256)
		q->b[q->nb++] = (struct bind){SQLITE_INTEGER, 0, i, NULL, 0};
}

static void bind_s(struct q *q, const char *s)
{
	if (q->nb < 256)
		q->b[q->nb++] = (struct bind){SQLITE_TEXT, 0, 0, s, strlen(s)};
}

static void in_list(struct q *q, const struct store_strs *v)
{
	buf_putc(&q->where, '(');
	for (size_t i = 0; i < v->n; i++) {
		buf_puts(&q->where, i ? ",?" : "?");
		bind_s(q, v->v[i]);
	}
	buf_putc(&q->where, ')');
}

static void apply(sqlite3_stmt *st, const struct q *q, int from)
{
	for (int i = 0; i < q->nb; i++) {
		const struct bind *b = &q->b[i];
		if (b->type == SQLITE_FLOAT)
			sqlite3_bind_double(st, from + i, b->d);
		else if (b->type == SQLITE_INTEGER)
			sqlite3_bind_int64(st, from + i, b->i);
		else
			sqlite3_bind_text(st, from + i, b->s, (int)b->n, SQLITE_STATIC);
	}
}

/* The filters of sel for k except the window, as " AND ..." terms. */
static void filters(const struct store_coll *c, int k,
                    const struct store_select *sel, struct q *q)
{
	struct buf *w = &q->where;
	if (k == EVIDENCE_REQUESTS) {
		if (sel->sessions.on)
			buf_puts(w, " AND session IN "), in_list(q, &sel->sessions);
		if (sel->agents.on)
			buf_puts(w, " AND agent IN "), in_list(q, &sel->agents);
		if (sel->workers.on) {
			buf_puts(w, " AND ordinal IN (SELECT ordinal FROM "
			            STORE_EXT_REQUEST_WORKERS " WHERE worker IN ");
			in_list(q, &sel->workers);
			buf_putc(w, ')');
		}
		/* (ttft_ms or 0) >= min_ttft_ms; a no-op at 0 without negatives */
		if (sel->min_ttft_ms > 0 || c->meta.negative_ttft > 0) {
			buf_puts(w, " AND coalesce(ttft_ms, 0) >= ?");
			bind_d(q, sel->min_ttft_ms);
		}
	} else if (k == EVIDENCE_SESSIONS) {
		if (sel->sessions.on)
			buf_puts(w, " AND id IN "), in_list(q, &sel->sessions);
		if (sel->agents.on) {
			buf_puts(w, " AND ordinal IN (SELECT ordinal FROM "
			            STORE_EXT_SESSION_AGENTS " WHERE agent IN ");
			in_list(q, &sel->agents);
			buf_putc(w, ')');
		}
	} else if (k == EVIDENCE_ITERATIONS) {
		if (sel->workers.on)
			buf_puts(w, " AND worker IN "), in_list(q, &sel->workers);
		if (sel->has_rank) {
			buf_puts(w, " AND (CASE WHEN has_rank_kind THEN rank"
			            " ELSE global_rank END) = ?");
			bind_i(q, sel->rank);
		}
	}
}

static void window(int k, const struct store_select *sel, struct q *q)
{
	if (k == EVIDENCE_ITERATIONS)
		buf_puts(&q->where, " AND start <= ? AND coalesce(end, start) >= ?");
	else
		buf_puts(&q->where, " AND start <= ? AND end >= ?");
	bind_d(q, sel->end);
	bind_d(q, sel->start);
}

/* Runs "SELECT count(*) FROM table WHERE 1<where>" into *n. */
static int count_where(struct store_coll *c, int k, const char *where,
                       const struct q *q, int64_t *n, struct err *e)
{
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("SELECT count(*) FROM %s WHERE 1%s",
	                            store_ext_table(k), where);
	int rc;

	if (!sql)
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return c_fail(c, e, store_ext_table(k));
	apply(st, q, 1);
	rc = sqlite3_step(st);
	*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : c_fail(c, e, store_ext_table(k));
}

/* The window alone over a table with no other filter, counted from the
 * few rows outside it: timed - before - after + both. */
static int count_outside(struct store_coll *c, int k,
                         const struct store_select *sel, int64_t *n,
                         struct err *e)
{
	static const char *const part[3] = {
		" AND start > ? AND end IS NOT NULL",
		" AND end < ? AND start IS NOT NULL",
		" AND start > ? AND end < ?",
	};
	int64_t x[3];
	for (int i = 0; i < 3; i++) {
		struct q q;
		memset(&q, 0, sizeof q);
		if (i != 1)
			bind_d(&q, sel->end);
		if (i != 0)
			bind_d(&q, sel->start);
		if (count_where(c, k, part[i], &q, &x[i], e))
			return e->code;
	}
	*n = c->meta.timed[k] - x[0] - x[1] + x[2];
	return 0;
}

/* The ORDER BY of sel's keys from key `from` on, with nulls last. */
static void order_by(struct buf *b, const struct store_select *sel, size_t from)
{
	for (size_t i = from; i < sel->nsort; i++)
		buf_printf(b, "(\"%s\" IS NULL), \"%s\" %s, ", sel->sort[i].key,
		           sel->sort[i].key, sel->sort[i].desc ? "DESC" : "ASC");
	buf_puts(b, "ordinal");
}

/* Emits the rows of sql (ordinal, store_elem_columns(to->shape)) through
 * to; to->got counts them. */
static int run_page(struct sink *to, const char *sql, const struct q *q,
                    int64_t limit, int64_t offset, struct err *e)
{
	struct store_coll *c = to->c;
	sqlite3_stmt *st = NULL;
	int rc = 0, s;

	to->got = 0;
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
		return c_fail(c, e, store_ext_table(to->k));
	apply(st, q, 1);
	sqlite3_bind_int64(st, q->nb + 1, limit);
	sqlite3_bind_int64(st, q->nb + 2, offset);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		to->got++;
		if ((rc = call_with(to, st, 1, sqlite3_column_int64(st, 0), e)))
			break;
	}
	if (!rc && s != SQLITE_DONE)
		rc = c_fail(c, e, store_ext_table(to->k));
	sqlite3_finalize(st);
	return rc;
}

/* The page of sel (to->shape is sel's) in order: unsorted by ordinal;
 * sorted in two parts (first key not null, through its index, then null),
 * each ordered by the keys. */
static int page(struct sink *to, const struct store_select *sel,
                const struct q *q, int64_t total, int wide, struct err *e)
{
	struct store_coll *c = to->c;
	int k = to->k;
	struct buf sql;
	int64_t got = 0, nn;
	int rc;
	const char *t = store_ext_table(k);

	if (sel->limit <= 0 || sel->offset >= total)
		return 0;
	buf_init(&sql, 0);
	if (!sel->nsort) {
		buf_printf(&sql, "SELECT ordinal, %s FROM %s WHERE 1%s ORDER BY ordinal"
		           " LIMIT ? OFFSET ?", store_elem_columns(sel->shape), t,
		           q->where.data ? q->where.data : "");
		rc = sql.failed ? err_set(e, ERR_NOMEM, "out of memory")
		                : run_page(to, sql.data, q, sel->limit, sel->offset,
		                           e);
		buf_free(&sql);
		return rc;
	}
	const char *k1 = sel->sort[0].key;
	/* a wide window with no other filter: walk the key's index */
	if (wide)
		buf_printf(&sql, "SELECT ordinal, %s FROM %s INDEXED BY %s_%s WHERE"
		           " \"%s\" IS NOT NULL%s ORDER BY ", store_elem_columns(sel->shape), t, t,
		           k1, k1,
		           q->where.data ? q->where.data : "");
	else
		buf_printf(&sql, "SELECT ordinal, %s FROM %s WHERE \"%s\" IS NOT NULL%s"
		           " ORDER BY ", store_elem_columns(sel->shape), t, k1,
		           q->where.data ? q->where.data : "");
	buf_printf(&sql, "\"%s\" %s, ", k1, sel->sort[0].desc ? "DESC" : "ASC");
	order_by(&sql, sel, 1);
	buf_puts(&sql, " LIMIT ? OFFSET ?");
	rc = sql.failed ? err_set(e, ERR_NOMEM, "out of memory")
	                : run_page(to, sql.data, q, sel->limit, sel->offset, e);
	got = to->got;
	if (rc || got >= sel->limit) {
		buf_free(&sql);
		return rc;
	}
	/* how many have the first key: known when the first part ended
	 * inside the page, else counted */
	if (got > 0) {
		nn = sel->offset + got;
	} else {
		buf_reset(&sql);
		buf_printf(&sql, " AND \"%s\" IS NOT NULL%s", k1,
		           q->where.data ? q->where.data : "");
		if ((rc = count_where(c, k, sql.data, q, &nn, e))) {
			buf_free(&sql);
			return rc;
		}
	}
	int64_t off = sel->offset + got - nn, lim = sel->limit - got;
	buf_reset(&sql);
	buf_printf(&sql, "SELECT ordinal, %s FROM %s WHERE \"%s\" IS NULL%s ORDER BY ",
	           store_elem_columns(sel->shape), t, k1, q->where.data ? q->where.data : "");
	order_by(&sql, sel, 1);
	buf_puts(&sql, " LIMIT ? OFFSET ?");
	rc = sql.failed ? err_set(e, ERR_NOMEM, "out of memory")
	                : run_page(to, sql.data, q, lim, off < 0 ? 0 : off, e);
	buf_free(&sql);
	return rc;
}

/* ---- search: candidates in SQL (the trigram index when the needle has 3
 * code points or more), the exact substring test here ---- */

struct hit {
	int64_t ordinal;
	sqlite3_value **keys; /* one per sort key (sqlite3_value_dup) */
};

static size_t code_points(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xC0) != 0x80;
	return k;
}

static int hit_cmp(const void *pa, const void *pb, void *arg)
{
	const struct hit *a = pa, *b = pb;
	const struct store_select *sel = arg;
	for (size_t i = 0; i < sel->nsort; i++) {
		int c = store_elem_cmp(a->keys[i], b->keys[i], sel->sort[i].desc);
		if (c)
			return c;
	}
	return a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
}

static void hits_free(struct hit *h, size_t n, size_t nk)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < nk && h[i].keys; k++)
			sqlite3_value_free(h[i].keys[k]);
		free(h[i].keys);
	}
	free(h);
}

static int search(struct store_coll *c, const struct store_select *sel,
                  struct q *q, int64_t *total, store_elem_fn fn, void *ctx,
                  struct err *e)
{
	struct buf sql, match;
	sqlite3_stmt *st = NULL;
	struct hit *h = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, s, fts = code_points(sel->needle, sel->needle_len) >= 3;
	const struct sink to = {c, EVIDENCE_REQUESTS, STORE_WHOLE, fn, ctx, 0};

	buf_init(&sql, 0);
	buf_init(&match, 0);
	buf_puts(&sql, "SELECT ordinal, search");
	for (size_t i = 0; i < sel->nsort; i++)
		buf_printf(&sql, ", \"%s\"", sel->sort[i].key);
	/* the exact test over the narrow index when it holds every column the
	 * statement reads (the window, the ordinal, search) */
	buf_printf(&sql, " FROM " STORE_EXT_REQUESTS "%s WHERE 1%s",
	           c->search_index && !sel->nsort && !sel->sessions.on &&
	           !sel->agents.on && !(sel->min_ttft_ms > 0 || c->meta.negative_ttft > 0)
	           ? " INDEXED BY dsight_requests_search" : "",
	           q->where.data ? q->where.data : "");
	if (fts) {
		/* a phrase of the needle's trigrams: "..." with " doubled */
		buf_putc(&match, '"');
		for (size_t i = 0; i < sel->needle_len; i++) {
			if (sel->needle[i] == '"')
				buf_putc(&match, '"');
			buf_putc(&match, sel->needle[i]);
		}
		buf_putc(&match, '"');
		buf_puts(&sql, " AND ordinal IN (SELECT rowid FROM " STORE_EXT_REQUEST_SEARCH
		               " WHERE " STORE_EXT_REQUEST_SEARCH " MATCH ?)");
	}
	buf_puts(&sql, " ORDER BY ordinal");
	if (sql.failed || match.failed) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (sqlite3_prepare_v2(c->db, sql.data, -1, &st, NULL) != SQLITE_OK) {
		rc = c_fail(c, e, STORE_EXT_REQUEST_SEARCH);
		goto out;
	}
	apply(st, q, 1);
	if (fts)
		sqlite3_bind_text(st, q->nb + 1, match.data, (int)match.len, SQLITE_STATIC);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(st, 1);
		int bn = sqlite3_column_bytes(st, 1);
		if (!b || !memmem(b, (size_t)bn, sel->needle, sel->needle_len))
			continue;
		if (vec_reserve(&h, &cap, n + 1, sizeof *h)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		h[n].ordinal = sqlite3_column_int64(st, 0);
		h[n].keys = sel->nsort ? calloc(sel->nsort, sizeof *h[n].keys) : NULL;
		n++;
		for (size_t i = 0; i < sel->nsort; i++)
			if (!h[n - 1].keys ||
			    !(h[n - 1].keys[i] = sqlite3_value_dup(sqlite3_column_value(st, 2 + (int)i))))
				rc = err_set(e, ERR_NOMEM, "out of memory");
		if (rc)
			break;
	}
	if (!rc && s != SQLITE_DONE)
		rc = c_fail(c, e, STORE_EXT_REQUESTS);
	sqlite3_finalize(st);
	if (rc)
		goto out;
	*total = (int64_t)n;
	if (sel->nsort && n)
		qsort_r(h, n, sizeof *h, hit_cmp, (void *)sel);
	for (int64_t i = sel->offset; !rc && i < (int64_t)n && i < sel->offset + sel->limit; i++) {
		sqlite3_stmt *at = c->at[EVIDENCE_REQUESTS];
		sqlite3_reset(at);
		sqlite3_bind_int64(at, 1, h[i].ordinal);
		if (sqlite3_step(at) != SQLITE_ROW)
			rc = c_fail(c, e, STORE_EXT_REQUESTS);
		else
			rc = call_with(&to, at, 0, h[i].ordinal, e);
		sqlite3_reset(at);
	}
out:
	hits_free(h, n, sel->nsort);
	buf_free(&sql);
	buf_free(&match);
	return rc;
}

int store_coll_select(struct store_coll *c, enum evidence_collection k,
                      const struct store_select *sel, int64_t *total,
                      int64_t *unaligned, store_elem_fn fn, void *ctx,
                      struct err *e)
{
	struct q q;
	int rc, wide;
	int other = sel->sessions.on || sel->agents.on || sel->workers.on ||
	            sel->has_rank || sel->needle;

	*total = 0;
	if (unaligned)
		*unaligned = 0;
	/* every column the selection reads must hold canonical values */
	if (irregular(c, k, "start") || irregular(c, k, "end") ||
	    (k == EVIDENCE_REQUESTS && (irregular(c, k, "ttft_ms") ||
	     (sel->sessions.on && irregular(c, k, "session")) ||
	     (sel->agents.on && irregular(c, k, "agent")))) ||
	    (k == EVIDENCE_SESSIONS && sel->sessions.on && irregular(c, k, "id")) ||
	    (k == EVIDENCE_ITERATIONS && ((sel->workers.on && irregular(c, k, "worker")) ||
	     (sel->has_rank && (irregular(c, k, "rank") || irregular(c, k, "global_rank"))))))
		return STORE_COLL_FALLBACK;
	for (size_t i = 0; i < sel->nsort; i++)
		if (!sortable(k, sel->sort[i].key) || irregular(c, k, sel->sort[i].key))
			return STORE_COLL_FALLBACK;
	memset(&q, 0, sizeof q);
	buf_init(&q.where, 0);
	filters(c, k, sel, &q);
	if (k == EVIDENCE_ITERATIONS && unaligned) {
		struct buf w;
		buf_init(&w, 0);
		buf_printf(&w, " AND start IS NULL%s", q.where.data ? q.where.data : "");
		rc = w.failed ? err_set(e, ERR_NOMEM, "out of memory")
		              : count_where(c, k, w.data, &q, unaligned, e);
		buf_free(&w);
		if (rc) {
			buf_free(&q.where);
			return rc;
		}
	}
	int before = q.where.len > 0;
	window(k, sel, &q);
	if (q.where.failed || q.nb >= 250) {
		buf_free(&q.where);
		return q.where.failed ? err_set(e, ERR_NOMEM, "out of memory")
		                      : STORE_COLL_FALLBACK;
	}
	if (k == EVIDENCE_REQUESTS && sel->needle) {
		rc = search(c, sel, &q, total, fn, ctx, e);
		buf_free(&q.where);
		return rc;
	}
	/* wide: the window alone, over at least half the elements' span */
	wide = !other && !before && k != EVIDENCE_ITERATIONS &&
	       sel->end - sel->start >= 0 && c->meta.timed[k] > 0;
	if (wide) {
		/* counted from the rows outside (an index range each): about the
		 * cost of counting those inside when the window is narrow, far
		 * less when it covers most of the run */
		rc = count_outside(c, k, sel, total, e);
		/* a page ordered by a key walks that key's index when the window
		 * keeps most rows */
		wide = !rc && *total * 2 >= c->meta.timed[k];
	} else {
		rc = count_where(c, k, q.where.data, &q, total, e);
	}
	if (!rc) {
		struct sink to = {c, (int)k, sel->shape, fn, ctx, 0};
		rc = page(&to, sel, &q, *total, wide, e);
	}
	buf_free(&q.where);
	return rc;
}
