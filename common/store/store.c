/* store: the read-only SQLite v1 cache reader (see store.h). */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "base/buf.h"
#include "base/num.h"
#include "base/vec.h"
#include "store/store_payload.h"

enum {
	ST_GEN,
	ST_DURATIONS,
	ST_EVENTS_WIN,
	ST_EVENTS_ALL,
	ST_EVENTS_WIDE,
	ST_EVENT_AT,
	ST_SAMPLES_WIN,
	ST_SAMPLES_ALL,
	ST_POINTS_WIN,
	ST_POINTS_ALL,
	ST_POINTS_WIDE,
	ST_SAMPLES_WIDE,
	ST_POINTS_MAXBEFORE,
	ST_POINTS_AT,
	ST_NEXT_BUCKET,
	ST_COUNT
};

static const char *const sql_text[ST_COUNT] = {
	[ST_GEN] = "SELECT generation FROM catalog",
	[ST_DURATIONS] = "SELECT bucket, maximum FROM durations WHERE "
	                 "profile = ?1 ORDER BY bucket",
	[ST_EVENTS_WIN] =
		"SELECT ordinal, start, end, name, tid, source_row FROM events "
		"INDEXED BY event_window WHERE profile = ?1 AND bucket = ?2 "
		"AND start >= ?3 AND start <= ?4 AND end >= ?5",
	[ST_EVENTS_ALL] =
		"SELECT ordinal, start, end, name, tid, source_row FROM events "
		"WHERE profile = ?1 ORDER BY ordinal",
	[ST_EVENTS_WIDE] =
		"SELECT ordinal, start, end, name, tid, source_row FROM events "
		"NOT INDEXED WHERE profile = ?1 AND start <= ?2 AND end >= ?3",
	[ST_EVENT_AT] =
		"SELECT ordinal, start, end, name, tid, source_row FROM events "
		"WHERE profile = ?1 AND ordinal = ?2",
	[ST_SAMPLES_WIN] =
		"SELECT ordinal, payload, time FROM samples INDEXED BY sample_window "
		"WHERE profile = ?1 AND time >= ?2 AND time <= ?3 ORDER BY ordinal",
	[ST_SAMPLES_ALL] =
		"SELECT ordinal, payload, time FROM samples WHERE profile = ?1 "
		"ORDER BY ordinal",
	[ST_POINTS_WIN] =
		"SELECT ordinal, payload, time FROM points INDEXED BY point_window "
		"WHERE series = ?1 AND time >= ?2 AND time <= ?3 ORDER BY ordinal",
	[ST_POINTS_ALL] =
		"SELECT ordinal, payload, time FROM points WHERE series = ?1 "
		"ORDER BY ordinal",
	[ST_POINTS_WIDE] =
		"SELECT ordinal, payload, time FROM points NOT INDEXED "
		"WHERE series = ?1 AND time >= ?2 AND time <= ?3 ORDER BY ordinal",
	[ST_SAMPLES_WIDE] =
		"SELECT ordinal, payload, time FROM samples NOT INDEXED "
		"WHERE profile = ?1 AND time >= ?2 AND time <= ?3 ORDER BY ordinal",
	[ST_POINTS_MAXBEFORE] =
		"SELECT max(time) FROM points INDEXED BY point_window "
		"WHERE series = ?1 AND time < ?2",
	[ST_POINTS_AT] =
		"SELECT ordinal, payload, time FROM points INDEXED BY point_window "
		"WHERE series = ?1 AND time = ?2 ORDER BY ordinal",
	[ST_NEXT_BUCKET] =
		"SELECT bucket FROM events INDEXED BY event_window WHERE "
		"profile = ?1 AND bucket > ?2 ORDER BY bucket LIMIT 1",
};

struct store {
	sqlite3 *db;
	yajl_handle ph;        /* payload parser, reused (multiple values) */
	struct store_payload *pctx;  /* its context */
	char *path;
	sqlite3_stmt *st[ST_COUNT];
	struct buf num_text; /* payload parsing scratch */
	struct buf str_text;
};

int store_is_sqlite_header(const unsigned char hdr[16])
{
	return memcmp(hdr, "SQLite format 3", 16) == 0;
}

/* 1 when the SQLite header of path says WAL mode (file format write and
 * read versions, bytes 18-19, are 2): SQLite would create -wal and -shm
 * files beside it even read-only. */
static int wal_mode(const char *path)
{
	unsigned char hdr[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;
	if (fd < 0)
		return 0;
	n = pread(fd, hdr, sizeof hdr, 0);
	close(fd);
	return n == (ssize_t)sizeof hdr && store_is_sqlite_header(hdr) &&
	       (hdr[18] == 2 || hdr[19] == 2);
}

/* Appends path percent-encoded for a file: URI. */
static void uri_path(struct buf *b, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		unsigned char c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '-' ||
		    c == '_' || c == '~') {
			buf_putc(b, (char)c);
		} else {
			buf_putc(b, '%');
			buf_putc(b, hex[c >> 4]);
			buf_putc(b, hex[c & 15]);
		}
	}
}

int store_open_ro(const char *abs_path, sqlite3 **db)
{
	return store_open_ro_vfs(abs_path, NULL, db);
}

int store_open_ro_vfs(const char *abs_path, const char *vfs, sqlite3 **db)
{
	struct buf uri;
	int rc;

	*db = NULL;
	buf_init(&uri, 0);
	buf_puts(&uri, "file:");
	uri_path(&uri, abs_path);
	buf_puts(&uri, "?mode=ro");
	if (uri.failed) {
		buf_free(&uri);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_open_v2(uri.data, db,
	                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
	                             SQLITE_OPEN_NOMUTEX,
	                     vfs);
	buf_free(&uri);
	return rc;
}

static int db_err(struct store *s, struct err *e, const char *what)
{
	return err_set(e, ERR_DATA, "%s: %s: %s", s->path, what,
	               s->db ? sqlite3_errmsg(s->db) : "cannot open");
}

int store_open(const char *path, struct store **out, struct err *e)
{
	struct store *s = calloc(1, sizeof *s);
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	buf_init(&s->num_text, 0);
	buf_init(&s->str_text, 0);
	s->pctx = calloc(1, sizeof *s->pctx);
	if (!s->pctx) {
		free(s);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	s->pctx->num_text = &s->num_text;
	s->pctx->str_text = &s->str_text;
	s->path = realpath(path, NULL);
	if (!s->path) {
		err_sys(e, ERR_DATA, "Cannot open DSight SQLite cache %s", path);
		free(s->pctx);
		free(s);
		return ERR_DATA;
	}
	if (wal_mode(s->path)) {
		/* a reader never writes beside a report */
		err_set(e, ERR_DATA, "%s: the cache is in WAL mode; rebuild the report", s->path);
		store_close(s);
		return ERR_DATA;
	}
	rc = store_open_ro(s->path, &s->db);
	if (rc == SQLITE_NOMEM && !s->db) {
		store_close(s);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	if (rc != SQLITE_OK) {
		err_set(e, ERR_DATA, "Cannot open DSight SQLite cache %s: %s",
		        s->path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		store_close(s);
		return ERR_DATA;
	}
	sqlite3_busy_timeout(s->db, 2000);
	sqlite3_exec(s->db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
	/* 8 MiB of page cache (2 MiB by default) keeps the upper index pages
	 * and the summaries of a warm session between queries: whole-run
	 * answers then cost lookups, not page reads. */
	sqlite3_exec(s->db, "PRAGMA cache_size = -8192", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) !=
	            SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		err_set(e, ERR_DATA,
		        "%s is not a readable DSight SQLite cache: %s", s->path,
		        sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		store_close(s);
		return ERR_DATA;
	}
	{
		sqlite3_int64 v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (v != 1) {
			err_set(e, ERR_DATA,
			        "Unsupported DSight SQLite version: %lld; expected 1 "
			        "(%s); rebuild the report from its preserved inputs "
			        "with dsight build",
			        (long long)v, s->path);
			store_close(s);
			return ERR_DATA;
		}
	}
	for (int k = 0; k < ST_COUNT; k++) {
		if (sqlite3_prepare_v3(s->db, sql_text[k], -1,
		                       SQLITE_PREPARE_PERSISTENT, &s->st[k],
		                       NULL) != SQLITE_OK) {
			err_set(e, ERR_DATA,
			        "%s is not a DSight SQLite cache (schema 1): %s",
			        s->path, sqlite3_errmsg(s->db));
			store_close(s);
			return ERR_DATA;
		}
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int k = 0; k < ST_COUNT; k++)
		sqlite3_finalize(s->st[k]);
	if (s->db)
		sqlite3_close(s->db);
	if (s->ph)
		yajl_free(s->ph);
	free(s->pctx);
	buf_free(&s->num_text);
	buf_free(&s->str_text);
	free(s->path);
	free(s);
}

/* Reads the single generation value into gen; returns 0 or ERR_DATA. */
static int read_generation(struct store *s, char *gen, struct err *e)
{
	sqlite3_stmt *st = s->st[ST_GEN];
	int rc, rows = 0;

	sqlite3_reset(st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *g = sqlite3_column_text(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		if (!g || n <= 0 || n > STORE_GENERATION_MAX) {
			sqlite3_reset(st);
			return err_set(e, ERR_DATA,
			               "%s: catalog generation is missing or too long",
			               s->path);
		}
		memcpy(gen, g, (size_t)n);
		gen[n] = '\0';
		rows++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_err(s, e, "cannot read the catalog");
	if (rows != 1)
		return err_set(e, ERR_DATA,
		               "%s: the catalog table must hold exactly one row "
		               "(found %d)",
		               s->path, rows);
	return 0;
}

int store_read_generation(struct store *s,
                          char generation[STORE_GENERATION_MAX + 1],
                          struct err *e)
{
	return read_generation(s, generation, e);
}

const char *store_path(const struct store *s)
{
	return s->path;
}

int store_read_catalog(struct store *s, json_t **catalog,
                       char generation[STORE_GENERATION_MAX + 1],
                       struct err *e)
{
	sqlite3_stmt *st = NULL;
	json_error_t je;
	json_t *j;
	int rc;

	*catalog = NULL;
	rc = read_generation(s, generation, e);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(s->db, "SELECT json FROM catalog", -1, &st,
	                       NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_err(s, e, "cannot read the catalog");
	}
	{
		const char *text = (const char *)sqlite3_column_text(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		if (!text) {
			sqlite3_finalize(st);
			return err_set(e, ERR_DATA, "%s: catalog json is NULL",
			               s->path);
		}
		j = json_loadb(text, (size_t)n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	}
	sqlite3_finalize(st);
	if (!j)
		return err_set(e, ERR_DATA,
		               "%s: catalog json is invalid (line %d, column %d): %s",
		               s->path, je.line, je.column, je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return err_set(e, ERR_DATA,
		               "%s: catalog json is not a JSON object", s->path);
	}
	*catalog = j;
	return 0;
}

int store_check_generation(struct store *s, const char *generation,
                           struct err *e)
{
	char now[STORE_GENERATION_MAX + 1];
	int rc = read_generation(s, now, e);
	if (rc)
		return rc;
	if (strcmp(now, generation) != 0)
		return err_set(e, ERR_REBUILT,
		               "DSight dataset was rebuilt; reopen it before "
		               "querying");
	return 0;
}

/* ---- events ---- */

static int is_number_col(sqlite3_stmt *st, int col)
{
	int t = sqlite3_column_type(st, col);
	return t == SQLITE_FLOAT || t == SQLITE_INTEGER;
}

sqlite3 *store_db(struct store *s)
{
	return s->db;
}

int store_read_begin(struct store *s, struct err *e)
{
	if (sqlite3_get_autocommit(s->db) &&
	    sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(s, e, "cannot begin reading");
	return 0;
}

void store_read_end(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

int store_event_decode(struct store *s, int64_t profile, sqlite3_stmt *st,
                       int64_t *ordinal_out, struct row_event *out,
                       struct err *e)
{
	struct row_event ev;
	int64_t ordinal = sqlite3_column_int64(st, 0);

	if (!is_number_col(st, 1) || !is_number_col(st, 2) ||
	    sqlite3_column_type(st, 3) != SQLITE_INTEGER ||
	    sqlite3_column_type(st, 5) != SQLITE_INTEGER ||
	    sqlite3_column_type(st, 4) == SQLITE_NULL)
		return err_set(e, ERR_DATA,
		               "%s: events row (profile %lld, ordinal %lld) is "
		               "malformed",
		               s->path, (long long)profile, (long long)ordinal);
	ev.start = sqlite3_column_double(st, 1);
	ev.end = sqlite3_column_double(st, 2);
	ev.name = sqlite3_column_int64(st, 3);
	ev.tid = (const char *)sqlite3_column_text(st, 4);
	ev.tid_len = (size_t)sqlite3_column_bytes(st, 4);
	ev.source_row = sqlite3_column_int64(st, 5);
	if (!ev.tid)
		return err_set(e, ERR_NOMEM, "out of memory");
	*ordinal_out = ordinal;
	*out = ev;
	return 0;
}

/* Reads one events row and calls fn.  Returns fn's value, or ERR_DATA for
 * a malformed row. */
static int event_row(struct store *s, int64_t profile, sqlite3_stmt *st,
                     row_event_fn fn, void *ctx, struct err *e)
{
	struct row_event ev;
	int64_t ordinal;
	int rc = store_event_decode(s, profile, st, &ordinal, &ev, e);

	return rc ? rc : fn(ctx, ordinal, &ev);
}

static int run_events(struct store *s, int64_t profile, sqlite3_stmt *st,
                      row_event_fn fn, void *ctx, struct err *e)
{
	int rc, r;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = event_row(s, profile, st, fn, ctx, e);
		if (r) {
			sqlite3_reset(st);
			return r;
		}
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_err(s, e, "cannot read events");
	return 0;
}

struct bucket_max {
	int64_t bucket;
	double maximum;
};

/* ERR_DATA unless the n durations rows bm of profile (in bucket order)
 * hold maxima inside their buckets and cover every bucket the profile's
 * events are in: a row missing or too small would hide events.  One index
 * probe per bucket present. */
static int check_durations(struct store *s, int64_t profile,
                           const struct bucket_max *bm, size_t n,
                           struct err *e)
{
	sqlite3_stmt *st = s->st[ST_NEXT_BUCKET];
	int64_t b = INT64_MIN;
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		if (!(bm[i].maximum >= 0) ||
		    row_bucket(0, bm[i].maximum) != bm[i].bucket ||
		    (i && bm[i].bucket <= bm[i - 1].bucket))
			return err_set(e, ERR_DATA, "%s: durations: profile %lld, "
			               "bucket %lld: the maximum %g is not in its "
			               "bucket; the report was altered: rebuild it",
			               s->path, (long long)profile,
			               (long long)bm[i].bucket, bm[i].maximum);
	for (;;) {
		sqlite3_bind_int64(st, 1, profile);
		sqlite3_bind_int64(st, 2, b);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		b = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		while (k < n && bm[k].bucket < b)
			k++;
		if (k == n || bm[k].bucket != b)
			return err_set(e, ERR_DATA, "%s: durations: profile %lld has"
			               " events in bucket %lld but no row for it; "
			               "the report was altered: rebuild it", s->path,
			               (long long)profile, (long long)b);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_err(s, e, "cannot read events");
}

/* The durations rows of profile, checked (check_durations): *bm
 * malloc'd (n of them).  0 or an ERR_* code (*bm NULL). */
static int read_durations(struct store *s, int64_t profile,
                          struct bucket_max **bm, size_t *n, struct err *e)
{
	sqlite3_stmt *st = s->st[ST_DURATIONS];
	size_t cap = 0;
	int rc, nomem = 0;

	*bm = NULL;
	*n = 0;
	sqlite3_bind_int64(st, 1, profile);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((nomem = vec_reserve(bm, &cap, *n + 1, sizeof **bm)))
			break;
		(*bm)[*n].bucket = sqlite3_column_int64(st, 0);
		(*bm)[*n].maximum = sqlite3_column_double(st, 1);
		(*n)++;
	}
	sqlite3_reset(st);
	if (nomem)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (rc == SQLITE_DONE)
		rc = check_durations(s, profile, *bm, *n, e);
	else
		rc = db_err(s, e, "cannot read durations");
	if (rc) {
		free(*bm);
		*bm = NULL;
	}
	return rc;
}

int store_check_durations(struct store *s, int64_t profile, struct err *e)
{
	struct bucket_max *bm;
	size_t n;
	int rc = read_durations(s, profile, &bm, &n, e);

	free(bm);
	return rc;
}

int store_events(struct store *s, int64_t profile,
                 const struct row_window *w, row_event_fn fn, void *ctx,
                 struct err *e)
{
	struct bucket_max *bm = NULL;
	size_t n = 0;
	sqlite3_stmt *st;
	double wstart, wend;
	int rc;

	if (!w) {
		st = s->st[ST_EVENTS_ALL];
		sqlite3_bind_int64(st, 1, profile);
		return run_events(s, profile, st, fn, ctx, e);
	}
	wstart = w->start;
	wend = w->end;
	if (w->wide) {
		/* Most rows match: one pass over the profile's rows beats an
		 * index lookup per row. */
		st = s->st[ST_EVENTS_WIDE];
		sqlite3_bind_int64(st, 1, profile);
		sqlite3_bind_double(st, 2, wend);
		sqlite3_bind_double(st, 3, wstart);
		return run_events(s, profile, st, fn, ctx, e);
	}
	/* Collect the (bucket, maximum) rows first: one statement at a time. */
	if ((rc = read_durations(s, profile, &bm, &n, e)))
		return rc;
	st = s->st[ST_EVENTS_WIN];
	for (size_t k = 0; k < n && !rc; k++) {
		double lower = nextafter(wstart - nextafter(bm[k].maximum, INFINITY),
		                         -INFINITY);
		if (isnan(lower))
			lower = -INFINITY;
		sqlite3_bind_int64(st, 1, profile);
		sqlite3_bind_int64(st, 2, bm[k].bucket);
		sqlite3_bind_double(st, 3, lower);
		sqlite3_bind_double(st, 4, wend);
		sqlite3_bind_double(st, 5, wstart);
		rc = run_events(s, profile, st, fn, ctx, e);
	}
	free(bm);
	return rc;
}

int store_event_at(struct store *s, int64_t profile, int64_t ordinal,
                   row_event_fn fn, void *ctx, struct err *e)
{
	sqlite3_stmt *st = s->st[ST_EVENT_AT];
	sqlite3_bind_int64(st, 1, profile);
	sqlite3_bind_int64(st, 2, ordinal);
	return run_events(s, profile, st, fn, ctx, e);
}

struct payload_fns {
	row_sample_fn sample;
	row_point_fn point;
	void *ctx;
};

static int run_payloads(struct store *s, const char *table, int64_t key,
                        sqlite3_stmt *st, const struct payload_fns *sink,
                        struct err *e)
{
	struct store_payload p;
	int rc, r = 0, is_point = sink->point != NULL;

	memset(&p, 0, sizeof p);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ordinal = sqlite3_column_int64(st, 0);
		const unsigned char *text = sqlite3_column_text(st, 1);
		size_t n = (size_t)sqlite3_column_bytes(st, 1);
		s->pctx->is_point = is_point;
		if (!text || store_payload_parse(&s->ph, s->pctx, text, n) ||
		    s->num_text.failed || s->str_text.failed) {
			r = err_set(e, ERR_DATA,
			            "%s: %s row (%lld, ordinal %lld): payload is not "
			            "%s",
			            s->path, table, (long long)key,
			            (long long)ordinal,
			            is_point ? "[time, value, source_id, source_row]"
			                       : "[time, global_tid, stack_index, "
			                         "source_row]");
			break;
		}
		p = *s->pctx;
		if (sqlite3_column_type(st, 2) != SQLITE_FLOAT &&
		    sqlite3_column_type(st, 2) != SQLITE_INTEGER) {
			r = err_set(e, ERR_DATA,
			            "%s: %s row (%lld, ordinal %lld): time is not a "
			            "number",
			            s->path, table, (long long)key,
			            (long long)ordinal);
			break;
		}
		p.time = sqlite3_column_double(st, 2);
		if (is_point) {
			struct row_point pt;
			memset(&pt, 0, sizeof pt);
			pt.time = p.time;
			pt.source_id = p.ints[0];
			pt.source_row = p.ints[1];
			if (p.value_kind == 0) {
				memset(&pt.value, 0, sizeof pt.value);
			} else if (num_parse(s->num_text.data, s->num_text.len,
			                     &pt.value)) {
				r = err_set(e, ERR_DATA,
				            "%s: %s row (%lld, ordinal %lld): bad value",
				            s->path, table, (long long)key,
				            (long long)ordinal);
				break;
			}
			r = sink->point(sink->ctx, ordinal, &pt);
		} else {
			struct row_sample sm;
			sm.time = p.time;
			sm.tid = s->str_text.data ? s->str_text.data : "";
			sm.tid_len = s->str_text.len;
			sm.stack = p.ints[0];
			sm.source_row = p.ints[1];
			r = sink->sample(sink->ctx, ordinal, &sm);
		}
		if (r)
			break;
	}
	sqlite3_reset(st);
	if (!r && rc != SQLITE_DONE)
		return db_err(s, e, "cannot read rows");
	return r;
}

/* Runs the windowed payload statement of one profile's samples or one
 * series' points (all / wide / exact window) through sink. */
static int windowed_payloads(struct store *s, const char *what, int64_t id,
                             const int stmt[3], const struct row_window *w,
                             struct payload_fns *sink, struct err *e)
{
	sqlite3_stmt *st = s->st[stmt[!w ? 0 : w->wide ? 1 : 2]];

	sqlite3_bind_int64(st, 1, id);
	if (w) {
		sqlite3_bind_double(st, 2, w->start);
		sqlite3_bind_double(st, 3, w->end);
	}
	return run_payloads(s, what, id, st, sink, e);
}

int store_samples(struct store *s, int64_t profile,
                  const struct row_window *w, row_sample_fn fn, void *ctx,
                  struct err *e)
{
	static const int stmt[3] = {ST_SAMPLES_ALL, ST_SAMPLES_WIDE,
	                            ST_SAMPLES_WIN};
	struct payload_fns sink = {fn, NULL, ctx};

	return windowed_payloads(s, "samples", profile, stmt, w, &sink, e);
}

int store_points(struct store *s, int64_t series, const struct row_window *w,
                 row_point_fn fn, void *ctx, struct err *e)
{
	static const int stmt[3] = {ST_POINTS_ALL, ST_POINTS_WIDE, ST_POINTS_WIN};
	struct payload_fns sink = {NULL, fn, ctx};

	return windowed_payloads(s, "points", series, stmt, w, &sink, e);
}

int store_points_before(struct store *s, int64_t series, double t,
                        row_point_fn fn, void *ctx, struct err *e)
{
	struct payload_fns sink = {NULL, fn, ctx};
	sqlite3_stmt *st = s->st[ST_POINTS_MAXBEFORE];
	double at;
	int rc;

	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_double(st, 2, t);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return db_err(s, e, "cannot read points");
	}
	if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
		sqlite3_reset(st);
		return 0;
	}
	at = sqlite3_column_double(st, 0);
	sqlite3_reset(st);
	st = s->st[ST_POINTS_AT];
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_double(st, 2, at);
	return run_payloads(s, "points", series, st, &sink, e);
}
