/* store_reqtyped: the requests' typed tables, written during the load
 * (see store_reqtyped.h). */
#include "store/store_reqtyped.h"

#include <math.h>
#include <stdint.h>
#include <string.h>


/* The members read, in the typed table's column order after ordinal. */
static const char *const keys[STORE_REQTYPED_COLS] = {
	"id", "session", "agent", "conversation", "start", "end", "first",
	"ttft_ms", "input_tokens", "output_tokens", "cached_tokens", "status",
	"client_kind"};

static const char tables_sql[] =
	"CREATE TABLE " STORE_TYPED_REQUESTS " (ordinal INTEGER PRIMARY KEY,"
	" id, session, agent, conversation, start, \"end\", first, ttft_ms,"
	" input_tokens, output_tokens, cached_tokens, status, client_kind);"
	"CREATE TABLE " STORE_TYPED_REQUEST_WORKERS " (ordinal INTEGER"
	" PRIMARY KEY, request, worker);";

/* The fallback: what json_extract and json_each read, for every request
 * of table %1$w. */
#define REQ_COL(k) "json_extract(json, '$." k "')"
static const char fallback_sql[] =
	"DELETE FROM " STORE_TYPED_REQUESTS ";"
	"DELETE FROM " STORE_TYPED_REQUEST_WORKERS ";"
	"INSERT INTO " STORE_TYPED_REQUESTS " SELECT ordinal, "
	REQ_COL("id") ", " REQ_COL("session") ", " REQ_COL("agent") ", "
	REQ_COL("conversation") ", " REQ_COL("start") ", " REQ_COL("end") ", "
	REQ_COL("first") ", " REQ_COL("ttft_ms") ", " REQ_COL("input_tokens")
	", " REQ_COL("output_tokens") ", " REQ_COL("cached_tokens") ", "
	REQ_COL("status") ", " REQ_COL("client_kind")
	" FROM \"%w\" ORDER BY ordinal;"
	"INSERT INTO " STORE_TYPED_REQUEST_WORKERS " (request, worker)"
	" SELECT json_extract(r.json, '$.id'), w.value"
	" FROM \"%w\" AS r, json_each(r.json, '$.workers') AS w"
	" ORDER BY r.ordinal, w.id;";

/* v (NULL: absent) as json_extract reads it from dsight's JSON of it:
 * 1 when plain. */
static int plain(struct buf *text, const json_t *v, struct store_val *x)
{
	memset(x, 0, sizeof *x);
	x->type = SQLITE_NULL;
	if (!v)
		return 1;
	switch (json_typeof(v)) {
	case JSON_TRUE:
	case JSON_FALSE:
		x->type = SQLITE_INTEGER;
		x->i = json_is_true(v);
		return 1;
	case JSON_INTEGER:
		x->type = SQLITE_INTEGER;
		x->i = json_integer_value(v);
		return 1;
	case JSON_REAL:
		x->type = SQLITE_FLOAT;
		x->d = json_real_value(v);
		/* -0.0 reads back as 0.0 */
		return isfinite(x->d) && !(x->d == 0 && signbit(x->d));
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (memchr(s, 0, n)) /* json_extract ends the text there */
			return 0;
		store_val_text(text, x, s, n);
		return 1;
	}
	case JSON_NULL:
		return 1;
	default: /* object, array: JSON text */
		return 0;
	}
}

void store_reqtyped_encode(struct buf *text, const json_t *el,
                           struct store_reqtyped_rec *r)
{
	const json_t *w = json_object_get(el, "workers");
	struct store_val x;
	size_t k;
	const json_t *v;

	r->ok = json_is_object(el);
	r->w_off = r->w_len = 0;
	for (int c = 0; r->ok && c < STORE_REQTYPED_COLS; c++)
		r->ok = plain(text, json_object_get(el, keys[c]), &r->v[c]);
	if (!r->ok || !w)
		return; /* absent: no worker rows */
	if (json_is_null(w)) {
		r->ok = 0; /* json_each gives one NULL row: the fallback */
		return;
	}
	if (!json_is_array(w)) {
		r->ok = 0;
		return;
	}
	/* the worker values: each an ext_val, then its text if any */
	r->w_off = text->len;
	json_array_foreach(w, k, v) {
		size_t slot = text->len;
		memset(&x, 0, sizeof x);
		buf_append(text, &x, sizeof x); /* filled once its text follows */
		if (!plain(text, v, &x)) {
			r->ok = 0;
			return;
		}
		if (!text->failed)
			memcpy(text->data + slot, &x, sizeof x);
	}
	r->w_len = text->len - r->w_off;
}

int store_reqtyped_create(sqlite3 *db, sqlite3_stmt **ins,
                          sqlite3_stmt **ins_w, struct err *e)
{
	if (sqlite3_exec(db, tables_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "INSERT INTO " STORE_TYPED_REQUESTS
	                       " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,"
	                       "?13,?14)", -1, SQLITE_PREPARE_PERSISTENT, ins,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "INSERT INTO " STORE_TYPED_REQUEST_WORKERS
	                       " (request, worker) VALUES (?1, ?2)", -1,
	                       SQLITE_PREPARE_PERSISTENT, ins_w, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot create the typed requests: %s",
		               sqlite3_errmsg(db));
	return 0;
}

static int step(sqlite3_stmt *st, struct err *e)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot write the typed requests: %s",
		               sqlite3_errmsg(sqlite3_db_handle(st)));
	return 0;
}

int store_reqtyped_insert(sqlite3_stmt *ins, sqlite3_stmt *ins_w,
                          const char *text, int64_t ordinal,
                          const struct store_reqtyped_rec *r, int *irregular,
                          struct err *e)
{
	struct store_val x;

	if (*irregular || !r->ok) {
		*irregular = 1;
		return 0;
	}
	sqlite3_bind_int64(ins, 1, ordinal);
	for (int c = 0; c < STORE_REQTYPED_COLS; c++)
		store_val_bind(ins, c + 2, text, &r->v[c]);
	if (step(ins, e))
		return e->code;
	for (size_t off = 0; off < r->w_len;
	     off += sizeof x + (x.type == SQLITE_TEXT ? x.len : 0)) {
		memcpy(&x, text + r->w_off + off, sizeof x);
		store_val_bind(ins_w, 1, text, &r->v[0]);
		store_val_bind(ins_w, 2, text, &x);
		if (step(ins_w, e))
			return e->code;
	}
	return 0;
}

int store_reqtyped_finish(sqlite3 *db, const char *json_table,
                          int irregular, struct err *e)
{
	char *sql;
	int rc;

	if (!irregular)
		return 0;
	if (!(sql = sqlite3_mprintf(fallback_sql, json_table, json_table)))
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot write the typed requests: %s",
		               sqlite3_errmsg(db));
	return 0;
}
