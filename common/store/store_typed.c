/* store_typed: the typed tables behind the views (see store_typed.h). */
#include "store/store_typed.h"

#include <string.h>

#include "base/buf.h"
#include "store/store_ext.h"

const int store_typed_cols[2] = {6, 4};

static const char schema_sql[] =
	"CREATE TABLE " STORE_TYPED_SAMPLES " (profile INTEGER, ordinal INTEGER,"
	" time REAL, tid TEXT, stack INTEGER, source_row INTEGER,"
	/* the leaf frame's symbol, set once the frames are written */
	" symbol, PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	/* value has no affinity: an INTEGER stays INTEGER, a REAL stays REAL */
	"CREATE TABLE " STORE_TYPED_POINTS " (series INTEGER, ordinal INTEGER,"
	" time REAL, value, PRIMARY KEY (series, ordinal)) WITHOUT ROWID;";

/* The rows per key the planner reads (sqlite_stat1), set from the exact
 * counts (the comments in index_sql say why).  Running it again changes
 * no row it set before, so the late part below runs it for the name
 * index's row. */
#define STAT1_FIX \
	"WITH d(p, s, nm, b) AS (SELECT"\
	" max(1, (SELECT count(*) FROM dsight_view_profiles)),"\
	" max(1, (SELECT count(*) FROM dsight_view_series)),"\
	" max(1, (SELECT count(*) FROM dsight_view_names)),"\
	" max(1, (SELECT count(*) FROM durations)))"\
	" UPDATE sqlite_stat1 SET stat = (SELECT CASE sqlite_stat1.idx"\
	" WHEN 'event_window' THEN printf('%d %d %d 1', n, max(1, n / p),"\
	" max(1, n / b))"\
	" WHEN 'dsight_events_name' THEN printf('%d %d %d 1 1', n,"\
	" max(1, n / p), max(1, n / nm))"\
	" WHEN 'dsight_samples_symbol' THEN sqlite_stat1.stat"\
	" ELSE printf('%d %d 1', n, max(1, n / (CASE WHEN sqlite_stat1.tbl IN"\
	" ('points', '" STORE_TYPED_POINTS "') THEN s ELSE p END))) END"\
	" FROM d, (SELECT coalesce((SELECT c.n FROM temp.dsight_row_counts AS c"\
	" WHERE c.tbl = sqlite_stat1.tbl), CAST(sqlite_stat1.stat AS INTEGER))"\
	" AS n))"\
	" WHERE tbl IN ('events', 'samples', 'points', '" STORE_TYPED_SAMPLES\
	"', '" STORE_TYPED_POINTS "', 'dsight_view_depth');"

/*
 * The views group and filter by names through these: an outer loop over a
 * dictionary in name order and an inner seek into the rows of that name,
 * so GROUP BY name (or worker, name) needs no sort.  A join on nvtx.worker
 * loops over the worker's names and seeks each name's ranges by start; one
 * on a request seeks its workers; GROUP BY symbol over cpu_self reads one
 * index.
 */
static const char index_sql[] =
	"CREATE INDEX dsight_view_names_name ON dsight_view_names (name,"
	" profile, id);"
	/* worker then name: GROUP BY worker, name streams too */
	"CREATE INDEX dsight_view_names_worker ON dsight_view_names (worker,"
	" name, profile, id);"
	"CREATE INDEX dsight_view_series_name ON dsight_view_series (name,"
	" series);"
	"CREATE INDEX dsight_samples_symbol ON " STORE_TYPED_SAMPLES
	" (symbol);"
	/* Table sizes for the planner (sqlite_stat1), sampled: at most 400
	 * rows of each index are read, so it costs milliseconds at any size.
	 * Without them SQLite guesses every table equally large and may loop
	 * over millions of ranges outside a few requests. */
	"PRAGMA analysis_limit = 400; ANALYZE;"
	/* A sample of 400 rows sees one profile or series and takes it for
	 * the whole table ("401 rows per profile"), so SQLite would sort
	 * millions of rows rather than loop over the names.  The row counts
	 * it estimated stay where the build did not count the rows itself
	 * (temp.dsight_row_counts: exact, whatever the pages' layout); the
	 * rows per key prefix come from the dictionaries: per profile, per
	 * series, per (profile, name), per (profile, duration bucket). */
	STAT1_FIX ";";

/* Beside the web phase, so in 8 MiB: the sorter's lists are sized from
 * the page cache, and on large (4.2 M ranges) 8 MiB sorted in no more CPU
 * than 64 MiB did, with 29 instead of 200 MiB resident. */
const char store_typed_late_sql[] =
	"PRAGMA cache_size = -8192;"
	"CREATE INDEX dsight_events_name ON events (profile, name, start,"
	" \"end\");"
	"CREATE INDEX dsight_view_requests_id ON " STORE_TYPED_REQUESTS " (id);"
	"CREATE INDEX dsight_view_request_workers_request ON "
	STORE_TYPED_REQUEST_WORKERS " (request, worker);"
	"PRAGMA analysis_limit = 400; ANALYZE dsight_events_name;"
	"ANALYZE " STORE_TYPED_REQUESTS "; ANALYZE " STORE_TYPED_REQUEST_WORKERS ";"
	STAT1_FIX ";"
	"DROP TABLE temp.dsight_row_counts;";

/*
 * Each sample's leaf symbol, from the frames (NULL where its stack has
 * none).  (The requests' typed tables are store_reqtyped's.)
 */
static const char views_sql[] =
	"UPDATE " STORE_TYPED_SAMPLES " SET symbol = (SELECT f.symbol"
	" FROM dsight_view_frames AS f WHERE f.profile = "
	STORE_TYPED_SAMPLES ".profile AND f.stack = " STORE_TYPED_SAMPLES
	".stack AND f.depth = 0);";

int store_typed_views(sqlite3 *db, struct err *e)
{
	if (sqlite3_exec(db, views_sql, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot write the samples' symbols: %s",
		               sqlite3_errmsg(db));
	return 0;
}

/*
 * One row's values: a sample's tid is read from its JSON string and a
 * point's big integer converted from its JSON text by SQLite's
 * json_extract itself, so the typed value is the one the payload gives.
 * A real is bound as the evidence reader parsed it (strtod: the nearest
 * double), which is what json_extract reads (t0226 checks every point
 * of its captures; all 7.6 M of `large` agree).  Not CAST(text AS REAL):
 * SQLite's own text-to-real conversion is one unit in the last place off
 * for about 35 in a million decimal texts, e.g. 81.6660926274565.
 */
static void row_sql(struct buf *b, enum store_typed_kind k, int base)
{
	if (k == STORE_TYPED_SAMPLE)
		buf_printf(b, "(?%d,?%d,?%d,json_extract(?%d,'$'),?%d,?%d)",
		           base + 1, base + 2, base + 3, base + 4, base + 5,
		           base + 6);
	else
		buf_printf(b, "(?%d,?%d,?%d,CASE WHEN typeof(?%d) = 'text'"
		           " THEN json_extract(?%d, '$') ELSE ?%d END)",
		           base + 1, base + 2, base + 3, base + 4, base + 4,
		           base + 4);
}

static int prepare(sqlite3 *db, enum store_typed_kind k, int rows,
                   sqlite3_stmt **out, struct err *e)
{
	struct buf sql;
	int rc;

	buf_init(&sql, 0);
	/* OR FAIL: no statement journal (store_write's prepare_multi) */
	buf_printf(&sql, "INSERT OR FAIL INTO %s VALUES ",
	           k == STORE_TYPED_SAMPLE
	                   ? STORE_TYPED_SAMPLES " (profile, ordinal, time, tid,"
	                                         " stack, source_row)"
	                   : STORE_TYPED_POINTS);
	for (int r = 0; r < rows; r++) {
		if (r)
			buf_putc(&sql, ',');
		row_sql(&sql, k, r * store_typed_cols[k]);
	}
	if (sql.failed) {
		buf_free(&sql);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	rc = sqlite3_prepare_v3(db, sql.data, -1, SQLITE_PREPARE_PERSISTENT,
	                        out, NULL);
	buf_free(&sql);
	if (rc != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot prepare the typed tables: %s",
		               sqlite3_errmsg(db));
	return 0;
}

int store_typed_create(sqlite3 *db, struct store_typed *t, int multi_rows,
                       struct err *e)
{
	memset(t, 0, sizeof *t);
	t->multi_rows = multi_rows;
	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot create the typed tables: %s",
		               sqlite3_errmsg(db));
	for (int k = 0; k < 2; k++)
		if (prepare(db, k, 1, &t->one[k], e) ||
		    prepare(db, k, multi_rows, &t->multi[k], e))
			return e->code;
	return 0;
}

sqlite3_stmt *store_typed_stmt(const struct store_typed *t,
                               enum store_typed_kind k, int n)
{
	return n == 1 ? t->one[k] : t->multi[k];
}

void store_typed_bind_sample(sqlite3_stmt *st, int row, int64_t profile,
                             int64_t ordinal, const struct row_sample *s)
{
	int b = row * store_typed_cols[STORE_TYPED_SAMPLE];

	sqlite3_bind_int64(st, b + 1, profile);
	sqlite3_bind_int64(st, b + 2, ordinal);
	sqlite3_bind_double(st, b + 3, s->time);
	sqlite3_bind_text(st, b + 4, s->tid, (int)s->tid_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, b + 5, s->stack);
	sqlite3_bind_int64(st, b + 6, s->source_row);
}

void store_typed_bind_point(sqlite3_stmt *st, int row, int64_t series,
                            int64_t ordinal, double time, const struct num *v,
                            const char *text, size_t len)
{
	int b = row * store_typed_cols[STORE_TYPED_POINT];

	sqlite3_bind_int64(st, b + 1, series);
	sqlite3_bind_int64(st, b + 2, ordinal);
	sqlite3_bind_double(st, b + 3, time);
	if (v->kind == NUM_INT)
		sqlite3_bind_int64(st, b + 4, v->i);
	else if (v->kind == NUM_NULL)
		sqlite3_bind_null(st, b + 4);
	else if (v->kind == NUM_REAL)
		sqlite3_bind_double(st, b + 4, v->d);
	else
		sqlite3_bind_text(st, b + 4, text, (int)len, SQLITE_STATIC);
}

void store_typed_close(struct store_typed *t)
{
	for (int k = 0; k < 2; k++) {
		sqlite3_finalize(t->one[k]);
		sqlite3_finalize(t->multi[k]);
		t->one[k] = t->multi[k] = NULL;
	}
}

int store_typed_finish(sqlite3 *db, const uint64_t rows[3], struct err *e)
{
	static const char *const tables[5] = {"events", "samples", "points",
	                                      STORE_TYPED_SAMPLES,
	                                      STORE_TYPED_POINTS};
	static const int kind[5] = {0, 1, 2, 1, 2};
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(db, "CREATE TEMP TABLE dsight_row_counts (tbl TEXT"
	                      " PRIMARY KEY, n INTEGER)", NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO temp.dsight_row_counts"
		                        " VALUES (?1, ?2)", -1, &st, NULL);
	for (int k = 0; rc == SQLITE_OK && k < 5; k++) {
		sqlite3_bind_text(st, 1, tables[k], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rows[kind[k]]);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, index_sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot index the typed tables: %s",
		               sqlite3_errmsg(db));
	return 0;
}
