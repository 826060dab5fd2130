/*
 * querylib: helpers shared by the query engine's unit tests: a minimal
 * SQLite v1 cache writer (independent of the build pipeline), a temp
 * directory, and running one query on both backends of a document.
 * Header-only (static functions), like testlib.h.
 */
#ifndef DSIGHT_QUERYLIB_H
#define DSIGHT_QUERYLIB_H

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "query/dataset.h"
#include "ingest/evidence.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "testlib.h"

#define FIXTURE "tests/fixtures/example.trace.json"

/* ---- a minimal cache writer (schema v1 of doc/report-files.md) ---- */

struct mk {
	sqlite3 *db;
	sqlite3_stmt *ev, *sm, *pt, *du;
};

static inline int bucket(double s, double e)
{
	double d = e - s;
	return (int)ceil(log2(d > 1e-9 ? d : 1e-9));
}

static inline int mk_event(void *ctx, int64_t p, int64_t k,
                    const struct row_event *r, struct err *e)
{
	struct mk *m = ctx;
	(void)e;
	sqlite3_reset(m->ev);
	sqlite3_bind_int64(m->ev, 1, p);
	sqlite3_bind_int64(m->ev, 2, k);
	sqlite3_bind_int(m->ev, 3, bucket(r->start, r->end));
	sqlite3_bind_double(m->ev, 4, r->start);
	sqlite3_bind_double(m->ev, 5, r->end);
	sqlite3_bind_int64(m->ev, 6, r->name);
	sqlite3_bind_text(m->ev, 7, r->tid, (int)r->tid_len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(m->ev, 8, r->source_row);
	sqlite3_step(m->ev);
	sqlite3_reset(m->du);
	sqlite3_bind_int64(m->du, 1, p);
	sqlite3_bind_int(m->du, 2, bucket(r->start, r->end));
	sqlite3_bind_double(m->du, 3, r->end - r->start);
	sqlite3_step(m->du);
	return 0;
}

static inline int mk_sample(void *ctx, int64_t p, int64_t k,
                     const struct row_sample *r, struct err *e)
{
	struct mk *m = ctx;
	struct buf b;
	(void)e;
	buf_init(&b, 0);
	buf_putc(&b, '[');
	jsonout_real(&b, r->time);
	buf_putc(&b, ',');
	jsonout_str(&b, r->tid, r->tid_len);
	buf_printf(&b, ",%lld,%lld]", (long long)r->stack,
	           (long long)r->source_row);
	sqlite3_reset(m->sm);
	sqlite3_bind_int64(m->sm, 1, p);
	sqlite3_bind_int64(m->sm, 2, k);
	sqlite3_bind_double(m->sm, 3, r->time);
	sqlite3_bind_text(m->sm, 4, b.data, (int)b.len, SQLITE_TRANSIENT);
	sqlite3_step(m->sm);
	buf_free(&b);
	return 0;
}

static inline int mk_point(void *ctx, int64_t s, int64_t k,
                    const struct row_point *r, struct err *e)
{
	struct mk *m = ctx;
	struct buf b;
	(void)e;
	buf_init(&b, 0);
	buf_putc(&b, '[');
	jsonout_real(&b, r->time);
	buf_putc(&b, ',');
	num_emit(&b, &r->value);
	buf_printf(&b, ",%lld,%lld]", (long long)r->source_id,
	           (long long)r->source_row);
	sqlite3_reset(m->pt);
	sqlite3_bind_int64(m->pt, 1, s);
	sqlite3_bind_int64(m->pt, 2, k);
	sqlite3_bind_double(m->pt, 3, r->time);
	sqlite3_bind_text(m->pt, 4, b.data, (int)b.len, SQLITE_TRANSIENT);
	sqlite3_step(m->pt);
	buf_free(&b);
	return 0;
}

/* Writes a cache for doc at out with the given user_version. */
static inline int mkcache(const char *doc, const char *out, int version,
                   const char *generation)
{
	struct mk m;
	struct row_sink sink;
	struct err e;
	json_t *cat = NULL;
	struct buf b;
	sqlite3_stmt *st;
	char sql[128];

	unlink(out);
	memset(&m, 0, sizeof m);
	if (sqlite3_open(out, &m.db) != SQLITE_OK)
		return -1;
	sqlite3_exec(m.db,
	             "CREATE TABLE catalog (json TEXT NOT NULL, generation TEXT NOT NULL);"
	             "CREATE TABLE events (profile INTEGER, ordinal INTEGER, bucket INTEGER, start REAL, end REAL, name INTEGER, tid TEXT, source_row INTEGER, PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	             "CREATE TABLE durations (profile INTEGER, bucket INTEGER, maximum REAL, PRIMARY KEY (profile, bucket)) WITHOUT ROWID;"
	             "CREATE TABLE samples (profile INTEGER, ordinal INTEGER, time REAL, payload TEXT, PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	             "CREATE TABLE points (series INTEGER, ordinal INTEGER, time REAL, payload TEXT, PRIMARY KEY (series, ordinal)) WITHOUT ROWID;"
	             "CREATE INDEX event_window ON events (profile, bucket, start);"
	             "CREATE INDEX sample_window ON samples (profile, time);"
	             "CREATE INDEX point_window ON points (series, time);"
	             "BEGIN;",
	             NULL, NULL, NULL);
	sqlite3_prepare_v2(m.db, "INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", -1, &m.ev, NULL);
	sqlite3_prepare_v2(m.db, "INSERT INTO samples VALUES (?,?,?,?)", -1, &m.sm, NULL);
	sqlite3_prepare_v2(m.db, "INSERT INTO points VALUES (?,?,?,?)", -1, &m.pt, NULL);
	sqlite3_prepare_v2(m.db,
	                   "INSERT INTO durations VALUES (?1,?2,?3) ON CONFLICT (profile, bucket) "
	                   "DO UPDATE SET maximum = max(maximum, excluded.maximum)",
	                   -1, &m.du, NULL);
	memset(&sink, 0, sizeof sink);
	sink.ctx = &m;
	sink.event = mk_event;
	sink.sample = mk_sample;
	sink.point = mk_point;
	if (evidence_read(doc, &sink, &cat, NULL, &e)) {
		fprintf(stderr, "mkcache: %s\n", e.msg);
		return -1;
	}
	buf_init(&b, 0);
	jsonout_tree(&b, cat, 0);
	json_decref(cat);
	sqlite3_prepare_v2(m.db, "INSERT INTO catalog VALUES (?, ?)", -1, &st, NULL);
	sqlite3_bind_text(st, 1, b.data, (int)b.len, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, generation, -1, SQLITE_STATIC);
	sqlite3_step(st);
	sqlite3_finalize(st);
	buf_free(&b);
	sqlite3_finalize(m.ev);
	sqlite3_finalize(m.sm);
	sqlite3_finalize(m.pt);
	sqlite3_finalize(m.du);
	snprintf(sql, sizeof sql, "COMMIT; PRAGMA user_version = %d;", version);
	sqlite3_exec(m.db, sql, NULL, NULL, NULL);
	return sqlite3_close(m.db) == SQLITE_OK ? 0 : -1;
}

/* ---- helpers ---- */

static char tmpdir[] = "/tmp/test-query-XXXXXX";

/* Removes the temp directory and returns the testlib status. */
static inline int querylib_done(void);

static inline const char *tmp_path(const char *name)
{
	static char p[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* The two backends of a document. */
struct pair {
	struct dataset *ds[2];
};

static inline struct pair open_pair(const char *doc)
{
	struct pair p;
	struct err e;
	const char *cache = tmp_path("pair.sqlite");
	memset(&p, 0, sizeof p);
	CHECK(mkcache(doc, cache, 1, "0123456789abcdef0123456789abcdef") == 0);
	CHECK(dataset_open(doc, &p.ds[0], &e) == 0);
	CHECK(dataset_open(cache, &p.ds[1], &e) == 0);
	return p;
}

/* Runs p on both backends; both must succeed with the same text, which
 * is returned (static). */
static inline const char *run2(struct pair *pr, const struct query_params *p)
{
	static char text[1 << 16];
	struct buf b[2];
	struct err e;
	for (int k = 0; k < 2; k++) {
		buf_init(&b[k], 0);
		if (query_run(pr->ds[k], p, &b[k], &e)) {
			fprintf(stderr, "  query failed: %s\n", e.msg);
			testlib_failed_checks++;
			buf_free(&b[0]);
			buf_free(&b[k]);
			return "";
		}
	}
	CHECK_STR(b[0].data, b[1].data);
	snprintf(text, sizeof text, "%s", b[0].data);
	buf_free(&b[0]);
	buf_free(&b[1]);
	return text;
}

/* Both backends fail with code and exactly msg. */
static inline void fail2(struct pair *pr, const struct query_params *p, int code,
                  const char *msg)
{
	for (int k = 0; k < 2; k++) {
		struct buf b;
		struct err e;
		buf_init(&b, 0);
		err_clear(&e);
		CHECK(query_run(pr->ds[k], p, &b, &e) == code);
		CHECK_STR(e.msg, msg);
		buf_free(&b);
	}
}

static inline void close_pair(struct pair *p)
{
	dataset_close(p->ds[0]);
	dataset_close(p->ds[1]);
}

#define HAS(text, frag)                                                    \
	do {                                                               \
		const char *t_ = (text);                                   \
		if (!strstr(t_, (frag))) {                                 \
			fprintf(stderr, "  %s:%d: missing %s in %.400s\n", \
			        __FILE__, __LINE__, (frag), t_);           \
			testlib_failed_checks++;                           \
		}                                                          \
	} while (0)

static inline struct query_params window(const char *kind, double a, double b)
{
	struct query_params p;
	query_params_init(&p);
	p.kind = kind;
	p.has_start = p.has_end = 1;
	p.start = a;
	p.end = b;
	return p;
}

/* The "rowid" values of the items, comma-separated. */
static inline const char *rowids(const char *text)
{
	static char out[512];
	json_t *j = json_loads(text, 0, NULL);
	json_t *items = json_object_get(j, "items"), *v;
	size_t k;
	out[0] = '\0';
	json_array_foreach(items, k, v) {
		char t[32];
		snprintf(t, sizeof t, "%s%lld", k ? "," : "",
		         (long long)json_integer_value(json_object_get(v, "rowid")));
		strcat(out, t);
	}
	json_decref(j);
	return out;
}


static inline int querylib_done(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return testlib_done();
}

#endif
