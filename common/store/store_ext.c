/* store_ext: dsight's extension tables (see store_ext.h). */
#include "store/store_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/text.h"
#include "store/store_late.h"

/* ---- layout ---------------------------------------------------------- */

static const struct ext_col req_cols[] = {
	{"id", "id", EXT_TEXT, 1},
	{"session", "session", EXT_TEXT, 1},
	{"agent", "agent", EXT_TEXT, 1},
	{"conversation", "conversation", EXT_TEXT, 0},
	{"status", "status", EXT_TEXT, 1},
	{"client_kind", "client_kind", EXT_TEXT, 0},
	{"start", "start", EXT_NUM, 1},
	{"end", "end", EXT_NUM, 1},
	{"first", "first", EXT_NUM, 1},
	{"ttft_ms", "ttft_ms", EXT_NUM, 1},
	{"duration", "duration", EXT_DURATION, 1},
	{"input_tokens", "input_tokens", EXT_NUM, 1},
	{"output_tokens", "output_tokens", EXT_NUM, 1},
	{"cached_tokens", "cached_tokens", EXT_NUM, 1},
	{"span_count", "spans", EXT_SIZE0, 1},
};
static const struct ext_col sess_cols[] = {
	{"id", "id", EXT_TEXT, 1},
	{"start", "start", EXT_NUM, 1},
	{"end", "end", EXT_NUM, 1},
	{"duration", "duration", EXT_DURATION, 1},
	{"requests", "requests", EXT_COUNT, 1},
};
static const struct ext_col span_cols[] = {
	{"id", "id", EXT_TEXT, 0},
	{"name", "name", EXT_TEXT, 1},
	{"role", "role", EXT_TEXT, 0},
	{"worker", "worker", EXT_TEXT, 0},
	{"start", "start", EXT_NUM, 1},
	{"end", "end", EXT_NUM, 1},
	{"duration", "duration", EXT_DURATION, 1},
};
static const struct ext_col iter_cols[] = {
	{"worker", "worker", EXT_TEXT, 1},
	{"kind", "kind", EXT_TEXT, 0},
	{"rank", "rank", EXT_NUM, 1},
	{"global_rank", "global_rank", EXT_NUM, 1},
	{"has_rank_kind", "rank_kind", EXT_PRESENT, 0},
	{"start", "start", EXT_NUM, 1},
	{"end", "end", EXT_NUM, 1},
	{"duration", "duration", EXT_DURATION, 1},
};

#define NCOLS(a) (sizeof a / sizeof a[0])

const struct ext_col *store_ext_columns(enum evidence_collection c, size_t *n)
{
	switch (c) {
	case EVIDENCE_REQUESTS: *n = NCOLS(req_cols); return req_cols;
	case EVIDENCE_SESSIONS: *n = NCOLS(sess_cols); return sess_cols;
	case EVIDENCE_SERVER_SPANS: *n = NCOLS(span_cols); return span_cols;
	default: *n = NCOLS(iter_cols); return iter_cols;
	}
}

const char *store_ext_table(enum evidence_collection c)
{
	static const char *const t[EVIDENCE_NCOLLECTIONS] = {
		STORE_EXT_REQUESTS, STORE_EXT_SESSIONS, STORE_EXT_SERVER_SPANS,
		STORE_EXT_ITERATIONS
	};
	return t[c];
}

/* Indexes: one per filter and sort key (the "indexed" columns above), the
 * worker/agent lists and the id lookup.  These are the ones the build's
 * web phase reads (a session's requests, the collections in start order,
 * the orphan requests, the counts and the density); the requests' other
 * ones are store_ext_late_index_sql.  The requests' are made with the
 * table, before the load (store_ext_create): after it, each scanned every
 * request's JSON. */
static const char load_index_sql[] =
	"CREATE INDEX dsight_requests_session ON " STORE_EXT_REQUESTS " (session);"
	"CREATE INDEX dsight_requests_start ON " STORE_EXT_REQUESTS " (start, end);"
	"CREATE INDEX dsight_requests_end ON " STORE_EXT_REQUESTS " (end, start);"
	"CREATE INDEX dsight_requests_span_count ON " STORE_EXT_REQUESTS " (span_count);"
	/* search's exact test reads a few hundred bytes per candidate, not
	 * the candidate's row with its JSON (the index is ~6% of the table) */
	"CREATE INDEX " STORE_EXT_SEARCH_INDEX " ON " STORE_EXT_REQUESTS " (ordinal, start, end, search);";
const char store_ext_index_sql[] =
	"CREATE INDEX dsight_sessions_id ON " STORE_EXT_SESSIONS " (id);"
	"CREATE INDEX dsight_sessions_start ON " STORE_EXT_SESSIONS " (start, end);"
	"CREATE INDEX dsight_sessions_end ON " STORE_EXT_SESSIONS " (end, start);"
	"CREATE INDEX dsight_sessions_duration ON " STORE_EXT_SESSIONS " (duration);"
	"CREATE INDEX dsight_sessions_requests ON " STORE_EXT_SESSIONS " (requests);"
	"CREATE INDEX dsight_session_agents_agent ON " STORE_EXT_SESSION_AGENTS " (agent, ordinal);"
	"CREATE INDEX dsight_server_spans_name ON " STORE_EXT_SERVER_SPANS " (name);"
	"CREATE INDEX dsight_server_spans_start ON " STORE_EXT_SERVER_SPANS " (start, end);"
	"CREATE INDEX dsight_server_spans_end ON " STORE_EXT_SERVER_SPANS " (end, start);"
	"CREATE INDEX dsight_server_spans_duration ON " STORE_EXT_SERVER_SPANS " (duration);"
	"CREATE INDEX dsight_iterations_worker ON " STORE_EXT_ITERATIONS " (worker);"
	"CREATE INDEX dsight_iterations_rank ON " STORE_EXT_ITERATIONS " (rank);"
	"CREATE INDEX dsight_iterations_global_rank ON " STORE_EXT_ITERATIONS " (global_rank);"
	"CREATE INDEX dsight_iterations_start ON " STORE_EXT_ITERATIONS " (start, end);"
	"CREATE INDEX dsight_iterations_end ON " STORE_EXT_ITERATIONS " (end, start);"
	"CREATE INDEX dsight_iterations_duration ON " STORE_EXT_ITERATIONS " (duration);";

/* Built beside the web phase (store_write_index_begin): on a capture of a
 * million requests each of these sorts the whole table, about 1.5 s of
 * CPU.  ANALYZE gives them the rows a whole ANALYZE would have. */
const char store_ext_late_index_sql[] =
	"PRAGMA analysis_limit = 400;"
	"CREATE INDEX dsight_requests_id ON " STORE_EXT_REQUESTS " (id);"
	"CREATE INDEX dsight_requests_agent ON " STORE_EXT_REQUESTS " (agent);"
	"CREATE INDEX dsight_requests_status ON " STORE_EXT_REQUESTS " (status);"
	"CREATE INDEX dsight_requests_first ON " STORE_EXT_REQUESTS " (first);"
	"CREATE INDEX dsight_requests_ttft_ms ON " STORE_EXT_REQUESTS " (ttft_ms);"
	"CREATE INDEX dsight_requests_duration ON " STORE_EXT_REQUESTS " (duration);"
	"CREATE INDEX dsight_requests_input_tokens ON " STORE_EXT_REQUESTS " (input_tokens);"
	"CREATE INDEX dsight_requests_output_tokens ON " STORE_EXT_REQUESTS " (output_tokens);"
	"CREATE INDEX dsight_requests_cached_tokens ON " STORE_EXT_REQUESTS " (cached_tokens);"
	"CREATE INDEX dsight_request_workers_worker ON " STORE_EXT_REQUEST_WORKERS " (worker, ordinal);"
	"ANALYZE " STORE_EXT_REQUESTS "; ANALYZE " STORE_EXT_REQUEST_WORKERS ";";

/* ---- encoding (parsing thread) ----------------------------------------- */

/* A 4-byte length then the bytes: one entry of a record's list. */
static void put_entry(struct buf *text, const char *s, size_t n)
{
	uint32_t len = (uint32_t)n;
	buf_append(text, &len, sizeof len);
	buf_append(text, s, n);
}

static void put_list(struct buf *text, struct ext_rec *r, const json_t *arr)
{
	size_t k;
	const json_t *v;

	r->list_off = text->len;
	json_array_foreach(arr, k, v)
		if (json_is_string(v))
			put_entry(text, json_string_value(v), json_string_length(v));
	r->list_len = text->len - r->list_off;
}

static int put_search_one(struct buf *text, const json_t *v, int *first)
{
	size_t n;
	char *low;

	if (!json_is_string(v))
		return 0;
	low = text_lower(json_string_value(v), json_string_length(v), &n);
	if (!low)
		return ERR_NOMEM;
	if (!*first)
		buf_putc(text, (char)0xff);
	*first = 0;
	buf_append(text, low, n);
	free(low);
	return 0;
}

/* The lowercased search fields of a request, each once, separated by the
 * byte 0xFF (never in UTF-8, so a needle cannot match across two). */
static int put_search(struct buf *text, struct ext_rec *r, const json_t *el)
{
	static const char *const one[] = {"id", "session", "agent",
	                                  "conversation"};
	static const char *const many[] = {"server_ids", "workers"};
	int first = 1;
	size_t k;
	const json_t *v;

	r->search_off = text->len;
	for (size_t i = 0; i < 4; i++)
		if (put_search_one(text, json_object_get(el, one[i]), &first))
			return ERR_NOMEM;
	for (size_t i = 0; i < 2; i++)
		json_array_foreach(json_object_get(el, many[i]), k, v)
			if (put_search_one(text, v, &first))
				return ERR_NOMEM;
	r->search_len = text->len - r->search_off;
	return 0;
}

int store_ext_encode(struct buf *text, enum evidence_collection c,
                     int64_t ordinal, const json_t *el, struct ext_rec *r,
                     unsigned *irregular, struct err *e)
{
	size_t ncols;
	const struct ext_col *cols = store_ext_columns(c, &ncols);

	memset(r, 0, sizeof *r);
	r->coll = (int)c;
	r->ordinal = ordinal;
	r->json_off = text->len;
	jsonout_tree(text, el, 0);
	r->json_len = text->len - r->json_off;
	for (size_t k = 0; k < ncols; k++) {
		const json_t *v = json_is_object(el) ? json_object_get(el, cols[k].key) : NULL;
		struct store_val *x = &r->col[k];
		x->type = SQLITE_NULL;
		switch (cols[k].kind) {
		case EXT_TEXT:
			if (json_is_string(v))
				store_val_text(text, x, json_string_value(v),
				               json_string_length(v));
			else if (v && !json_is_null(v))
				*irregular |= 1u << k;
			break;
		case EXT_NUM:
			if (json_is_integer(v)) {
				x->type = SQLITE_INTEGER, x->i = json_integer_value(v);
				/* compared as doubles by the engine, exactly by SQLite */
				if (x->i > (1LL << 53) || x->i < -(1LL << 53))
					*irregular |= 1u << k;
			}
			else if (json_is_real(v))
				x->type = SQLITE_FLOAT, x->d = json_real_value(v);
			else if (v && !json_is_null(v))
				*irregular |= 1u << k;
			break;
		case EXT_COUNT:
			if (json_is_array(v))
				x->type = SQLITE_INTEGER, x->i = (int64_t)json_array_size(v);
			else if (v)
				*irregular |= 1u << k;
			break;
		case EXT_SIZE0:
			x->type = SQLITE_INTEGER;
			x->i = json_is_array(v) ? (int64_t)json_array_size(v) : 0;
			break;
		case EXT_PRESENT:
			x->type = SQLITE_INTEGER, x->i = v != NULL;
			break;
		case EXT_DURATION: {
			const json_t *a = json_object_get(el, "start");
			const json_t *b = json_object_get(el, "end");
			if (json_is_number(a) && json_is_number(b))
				x->type = SQLITE_FLOAT,
				x->d = json_number_value(b) - json_number_value(a);
			break;
		}
		}
	}
	if (c == EVIDENCE_REQUESTS)
		store_reqtyped_encode(text, el, &r->typed);
	if (!json_is_object(el))
		*irregular |= 1u << 31;
	if (c == EVIDENCE_REQUESTS) {
		put_list(text, r, json_object_get(el, "workers"));
		if (put_search(text, r, el))
			return err_set(e, ERR_NOMEM, "out of memory");
	} else if (c == EVIDENCE_SESSIONS) {
		put_list(text, r, json_object_get(el, "agents"));
	}
	if (text->failed)
		return err_set(e, text->failed == ERR_DATA ? ERR_DATA : ERR_NOMEM,
		               "%s[%lld]: cannot encode the element",
		               evidence_collection_key(c), (long long)ordinal);
	return 0;
}

/* ---- tables (writer thread) ---------------------------------------------- */

static int x_fail(struct store_ext *x, struct err *e, const char *what)
{
	return err_set(e, ERR_DATA, "cannot write the %s: %s", what,
	               sqlite3_errmsg(x->db));
}

static int prepare(struct store_ext *x, sqlite3_stmt **st, const char *sql,
                   struct err *e)
{
	if (sqlite3_prepare_v3(x->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
	                       NULL) != SQLITE_OK)
		return x_fail(x, e, "extension tables (prepare)");
	return 0;
}

/* The CREATE TABLE of collection c, or its INSERT (ins != 0). */
static void table_sql(struct buf *b, int c, int ins)
{
	size_t n;
	const struct ext_col *cols = store_ext_columns(c, &n);

	if (ins) {
		buf_printf(b, "INSERT INTO %s VALUES (?1", store_ext_table(c));
		for (size_t k = 0; k < n + 1 + (c == EVIDENCE_REQUESTS); k++)
			buf_printf(b, ",?%zu", k + 2);
		buf_putc(b, ')');
		return;
	}
	/* numbers without a declared type: no affinity, so an integer stays
	 * an integer and a real a real */
	buf_printf(b, "CREATE TABLE %s (ordinal INTEGER PRIMARY KEY",
	           store_ext_table(c));
	for (size_t k = 0; k < n; k++)
		buf_printf(b, ", \"%s\"%s", cols[k].name,
		           cols[k].kind == EXT_TEXT ? " TEXT" :
		           cols[k].kind == EXT_COUNT || cols[k].kind == EXT_SIZE0 ||
		           cols[k].kind == EXT_PRESENT ?
		           " INTEGER" : "");
	if (c == EVIDENCE_REQUESTS)
		buf_puts(b, ", search BLOB");
	buf_puts(b, ", json TEXT NOT NULL);");
}

int store_ext_create(sqlite3 *db, struct store_ext *x, struct err *e)
{
	struct buf sql;
	int rc = 0;

	memset(x, 0, sizeof *x);
	x->db = db;
	buf_init(&sql, 0);
	buf_puts(&sql,
	         "CREATE TABLE dsight_meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
	         "CREATE TABLE dsight_core (json TEXT NOT NULL);"
	         "CREATE TABLE " STORE_EXT_REQUEST_WORKERS " (request TEXT, worker TEXT,"
	         " ordinal INTEGER);"
	         "CREATE TABLE " STORE_EXT_SESSION_AGENTS " (session TEXT, agent TEXT,"
	         " ordinal INTEGER);"
	         "CREATE VIRTUAL TABLE " STORE_EXT_REQUEST_SEARCH " USING fts5(text,"
	         " tokenize='trigram case_sensitive 1', content='',"
	         " columnsize=0);");
	for (int c = 0; c < EVIDENCE_NCOLLECTIONS; c++)
		table_sql(&sql, c, 0);
	if (sql.failed)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (sqlite3_exec(db, sql.data, NULL, NULL, NULL) != SQLITE_OK ||
	         sqlite3_exec(db, load_index_sql, NULL, NULL, NULL) != SQLITE_OK)
		rc = x_fail(x, e, "extension tables");
	for (int c = 0; c < EVIDENCE_NCOLLECTIONS && !rc; c++) {
		buf_reset(&sql);
		table_sql(&sql, c, 1);
		rc = sql.failed ? err_set(e, ERR_NOMEM, "out of memory")
		                : prepare(x, &x->ins[c], sql.data, e);
	}
	buf_free(&sql);
	if (!rc)
		rc = prepare(x, &x->ins_worker,
		             "INSERT INTO " STORE_EXT_REQUEST_WORKERS " VALUES (?1,?2,?3)", e);
	if (!rc)
		rc = prepare(x, &x->ins_agent,
		             "INSERT INTO " STORE_EXT_SESSION_AGENTS " VALUES (?1,?2,?3)", e);
	if (!rc)
		rc = prepare(x, &x->ins_search,
		             "INSERT INTO " STORE_EXT_REQUEST_SEARCH " (rowid, text)"
		             " VALUES (?1,?2)", e);
	if (!rc)
		rc = store_reqtyped_create(db, &x->ins_typed, &x->ins_typed_w, e);
	return rc;
}

static int step(struct store_ext *x, sqlite3_stmt *st, const char *what,
                struct err *e)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : x_fail(x, e, what);
}

/* Inserts the list entries of r into st as (name, entry, ordinal). */
static int insert_list(struct store_ext *x, sqlite3_stmt *st, const char *text,
                       const struct ext_rec *r, const char *what, struct err *e)
{
	const char *p = text + r->list_off, *end = p + r->list_len;
	const struct store_val *id = &r->col[0];

	while (p < end) {
		uint32_t n;
		memcpy(&n, p, sizeof n);
		p += sizeof n;
		if (id->type == SQLITE_TEXT)
			sqlite3_bind_text(st, 1, text + id->off, (int)id->len, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 1);
		sqlite3_bind_text(st, 2, p, (int)n, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, r->ordinal);
		if (step(x, st, what, e))
			return e->code;
		p += n;
	}
	return 0;
}

int store_ext_insert(struct store_ext *x, const char *text,
                     const struct ext_rec *r, struct err *e)
{
	sqlite3_stmt *st = x->ins[r->coll];
	size_t n;
	int p = 2;

	store_ext_columns(r->coll, &n);
	sqlite3_bind_int64(st, 1, r->ordinal);
	for (size_t k = 0; k < n; k++, p++) {
		store_val_bind(st, p, text, &r->col[k]);
	}
	if (r->coll == EVIDENCE_REQUESTS)
		sqlite3_bind_blob(st, p++, text + r->search_off, (int)r->search_len,
		                  SQLITE_STATIC);
	sqlite3_bind_text(st, p, text + r->json_off, (int)r->json_len, SQLITE_STATIC);
	if (step(x, st, store_ext_table(r->coll), e))
		return e->code;
	if (r->coll == EVIDENCE_REQUESTS) {
		if (insert_list(x, x->ins_worker, text, r, "request workers", e) ||
		    store_reqtyped_insert(x->ins_typed, x->ins_typed_w, text,
		                          r->ordinal, &r->typed,
		                          &x->typed_irregular, e))
			return e->code;
		/* the FTS text: the same fields, one per line */
		struct buf t;
		buf_init(&t, 0);
		buf_append(&t, text + r->search_off, r->search_len);
		/* (a NUL would end the trigram tokenizer's text: it becomes a
		 * line break too, a needle never holding a NUL) */
		for (size_t i = 0; i < t.len; i++)
			if ((unsigned char)t.data[i] == 0xff || !t.data[i])
				t.data[i] = '\n';
		sqlite3_bind_int64(x->ins_search, 1, r->ordinal);
		sqlite3_bind_text(x->ins_search, 2, t.data ? t.data : "", (int)t.len,
		                  SQLITE_STATIC);
		int rc = t.failed ? err_set(e, ERR_NOMEM, "out of memory")
		                  : step(x, x->ins_search, "request search index", e);
		buf_free(&t);
		return rc;
	}
	if (r->coll == EVIDENCE_SESSIONS)
		return insert_list(x, x->ins_agent, text, r, "session agents", e);
	return 0;
}

static int put_meta(struct store_ext *x, sqlite3_stmt *st, const char *k,
                    const char *v, struct err *e)
{
	sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
	return step(x, st, "dsight_meta", e);
}

/* dsight_meta key = the number of rows of c's table where cond holds. */
static int meta_count(struct store_ext *x, sqlite3_stmt *ins, const char *key,
                      int c, const char *cond, struct err *e)
{
	char sql[200], val[32];
	sqlite3_stmt *st = NULL;

	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s",
	         store_ext_table(c), cond);
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return x_fail(x, e, "dsight_meta");
	}
	snprintf(val, sizeof val, "%lld", (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return put_meta(x, ins, key, val, e);
}

int store_ext_finish(struct store_ext *x, const json_t *core,
                     const char *generation,
                     const uint64_t counts[EVIDENCE_NCOLLECTIONS],
                     const unsigned irregular[EVIDENCE_NCOLLECTIONS],
                     struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct buf b;
	char key[64], val[32];
	int rc;

	buf_init(&b, 0);
	jsonout_tree(&b, core, 0);
	if (b.failed) {
		buf_free(&b);
		return err_set(e, ERR_NOMEM, "cannot encode the core catalog");
	}
	if (sqlite3_prepare_v2(x->db, "INSERT INTO dsight_core VALUES (?1)", -1,
	                       &st, NULL) != SQLITE_OK) {
		buf_free(&b);
		return x_fail(x, e, "dsight_core");
	}
	sqlite3_bind_text(st, 1, b.data, (int)b.len, SQLITE_STATIC);
	rc = step(x, st, "dsight_core", e);
	sqlite3_finalize(st);
	buf_free(&b);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(x->db, "INSERT INTO dsight_meta VALUES (?1,?2)",
	                       -1, &st, NULL) != SQLITE_OK)
		return x_fail(x, e, "dsight_meta");
	rc = put_meta(x, st, "extension", STORE_EXT_VERSION, e);
	if (!rc)
		rc = put_meta(x, st, "generation", generation, e);
	for (int c = 0; c < EVIDENCE_NCOLLECTIONS && !rc; c++) {
		size_t n;
		const struct ext_col *cols = store_ext_columns(c, &n);
		snprintf(key, sizeof key, "count.%s", evidence_collection_key(c));
		snprintf(val, sizeof val, "%llu", (unsigned long long)counts[c]);
		rc = put_meta(x, st, key, val, e);
		buf_init(&b, 0);
		for (size_t k = 0; k < n; k++)
			if (irregular[c] & (1u << k))
				buf_printf(&b, "%s%s", b.len ? "," : "", cols[k].name);
		if (irregular[c] & (1u << 31))
			buf_printf(&b, "%s*", b.len ? "," : "");
		snprintf(key, sizeof key, "irregular.%s", evidence_collection_key(c));
		if (!rc)
			rc = put_meta(x, st, key, b.data ? b.data : "", e);
		buf_free(&b);
		/* the elements with a numeric start and end: what a window
		 * covering everything counts (the reader subtracts the few
		 * outside a wide window instead of counting the many inside) */
		snprintf(key, sizeof key, "timed.%s", evidence_collection_key(c));
		if (!rc)
			rc = meta_count(x, st, key, c, "start IS NOT NULL AND end IS NOT NULL", e);
	}
	/* a negative TTFT fails even the default --min-ttft-ms 0 */
	if (!rc)
		rc = meta_count(x, st, "negative_ttft", EVIDENCE_REQUESTS, "ttft_ms < 0", e);
	sqlite3_finalize(st);
	if (!rc)
		rc = store_reqtyped_finish(x->db, STORE_EXT_REQUESTS,
		                           x->typed_irregular, e);
	return rc;
}

void store_ext_close(struct store_ext *x)
{
	for (int c = 0; c < EVIDENCE_NCOLLECTIONS; c++)
		sqlite3_finalize(x->ins[c]);
	sqlite3_finalize(x->ins_worker);
	sqlite3_finalize(x->ins_agent);
	sqlite3_finalize(x->ins_search);
	sqlite3_finalize(x->ins_typed);
	sqlite3_finalize(x->ins_typed_w);
	memset(x->ins, 0, sizeof x->ins);
	x->ins_worker = x->ins_agent = x->ins_search = NULL;
	x->ins_typed = x->ins_typed_w = NULL;
}

/* ---- the whole catalog, collections from the tables ---------------------- */

static int flush_out(struct buf *b, int (*out)(void *, const char *, size_t),
                     void *ctx, struct err *e)
{
	int rc;
	if (b->failed)
		return err_set(e, ERR_NOMEM, "out of memory writing the catalog");
	rc = b->len ? out(ctx, b->data, b->len) : 0;
	buf_reset(b);
	if (rc && !e->msg[0])
		err_set(e, rc, "cannot write the catalog");
	return rc;
}

static int emit_collection(sqlite3 *db, int c, struct buf *b,
                           int (*out)(void *, const char *, size_t), void *ctx,
                           struct err *e)
{
	char sql[96];
	sqlite3_stmt *st = NULL;
	int rc = 0, step_rc, first = 1;

	snprintf(sql, sizeof sql, "SELECT json FROM %s ORDER BY ordinal",
	         store_ext_table(c));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot read %s: %s", store_ext_table(c),
		               sqlite3_errmsg(db));
	buf_putc(b, '[');
	while ((step_rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!first)
			buf_putc(b, ',');
		first = 0;
		buf_append(b, sqlite3_column_text(st, 0),
		           (size_t)sqlite3_column_bytes(st, 0));
		if (b->len >= (1u << 20) && (rc = flush_out(b, out, ctx, e)))
			break;
	}
	if (!rc && step_rc != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "cannot read %s: %s", store_ext_table(c),
		             sqlite3_errmsg(db));
	sqlite3_finalize(st);
	buf_putc(b, ']');
	return rc;
}

int store_ext_emit_catalog(sqlite3 *db, const json_t *core, unsigned from_db,
                           const char *extra,
                           int (*out)(void *ctx, const char *data, size_t n),
                           void *ctx, struct err *e)
{
	struct buf b;
	const char *k;
	json_t *v;
	int rc = 0, first = 1;

	buf_init(&b, 0);
	buf_putc(&b, '{');
	json_object_foreach((json_t *)core, k, v) {
		int c = -1;
		for (int i = 0; i < EVIDENCE_NCOLLECTIONS; i++)
			if ((from_db & (1u << i)) && !strcmp(k, evidence_collection_key(i)))
				c = i;
		if (!first)
			buf_putc(&b, ',');
		first = 0;
		jsonout_cstr(&b, k);
		buf_putc(&b, ':');
		if (c >= 0)
			rc = emit_collection(db, c, &b, out, ctx, e);
		else
			jsonout_tree(&b, v, 0);
		if (rc || (b.len >= (1u << 20) && (rc = flush_out(&b, out, ctx, e))))
			break;
	}
	if (!rc) {
		if (extra) {
			if (!first)
				buf_putc(&b, ',');
			buf_puts(&b, extra);
		}
		buf_putc(&b, '}');
		rc = flush_out(&b, out, ctx, e);
	}
	buf_free(&b);
	return rc;
}

int store_ext_emit_collection(sqlite3 *db, enum evidence_collection c,
                              int (*out)(void *ctx, const char *data, size_t n),
                              void *ctx, struct err *e)
{
	struct buf b;
	int rc;

	buf_init(&b, 0);
	rc = emit_collection(db, (int)c, &b, out, ctx, e);
	if (!rc)
		rc = flush_out(&b, out, ctx, e);
	buf_free(&b);
	return rc;
}

int store_ext_collections_mask(sqlite3 *db, unsigned *mask, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*mask = 0;
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM dsight_meta WHERE key"
	                       " LIKE 'count.%'", -1, &st, NULL) != SQLITE_OK)
		return 0; /* no extension: every collection is in the catalog */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		for (int c = 0; k && c < EVIDENCE_NCOLLECTIONS; c++)
			if (!strcmp(k + 6, evidence_collection_key(c)) &&
			    sqlite3_column_int64(st, 1) > 0)
				*mask |= 1u << c;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot read dsight_meta: %s",
		               sqlite3_errmsg(db));
	return 0;
}

int store_ext_open_collections(const char *path, sqlite3 **db, unsigned *mask,
                               struct err *e)
{
	char *uri = sqlite3_mprintf("file:%s?mode=ro", path);
	int rc;

	*db = NULL;
	*mask = 0;
	if (!uri)
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
	                     SQLITE_OPEN_NOMUTEX, NULL);
	sqlite3_free(uri);
	if (rc != SQLITE_OK) {
		err_set(e, ERR_DATA, "cannot open %s: %s", path,
		        *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return ERR_DATA;
	}
	/* the build reads them while its name index is written (WAL) */
	sqlite3_busy_timeout(*db, STORE_LATE_BUSY_MS);
	rc = store_ext_collections_mask(*db, mask, e);
	if (rc) {
		sqlite3_close(*db);
		*db = NULL;
	}
	return rc;
}
