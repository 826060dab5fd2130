/*
 * test_query: the query engine's edge cases, with expected values worked
 * out by hand from the fixture (or from the tiny documents written here),
 * checked on both backends: the in-memory document and a SQLite v1 cache
 * written by a minimal writer below (independent of the build pipeline).
 */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "buf.h"
#include "dataset.h"
#include "evidence.h"
#include "jsonout.h"
#include "query.h"
#include "testlib.h"

#define FIXTURE "tests/fixtures/example.trace.json"

/* ---- a minimal cache writer (schema v1 of report.md) ---- */

struct mk {
	sqlite3 *db;
	sqlite3_stmt *ev, *sm, *pt, *du;
};

static int bucket(double s, double e)
{
	double d = e - s;
	return (int)ceil(log2(d > 1e-9 ? d : 1e-9));
}

static int mk_event(void *ctx, int64_t p, int64_t k,
                    const struct evidence_event *r, struct err *e)
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

static int mk_sample(void *ctx, int64_t p, int64_t k,
                     const struct evidence_sample *r, struct err *e)
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

static int mk_point(void *ctx, int64_t s, int64_t k,
                    const struct evidence_point *r, struct err *e)
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
static int mkcache(const char *doc, const char *out, int version,
                   const char *generation)
{
	struct mk m;
	struct evidence_sink sink;
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

static const char *tmp_path(const char *name)
{
	static char p[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* The two backends of a document. */
struct pair {
	struct dataset *ds[2];
};

static struct pair open_pair(const char *doc)
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
static const char *run2(struct pair *pr, const struct query_params *p)
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
static void fail2(struct pair *pr, const struct query_params *p, int code,
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

static void close_pair(struct pair *p)
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

static struct query_params window(const char *kind, double a, double b)
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
static const char *rowids(const char *text)
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

/* ---- nsys ---- */

TEST(nsys_boundaries_touching_from_either_side)
{
	struct pair pr = open_pair(FIXTURE);
	/* [2.0,2.5] ends at the window start, [5.0,6.0] starts at its end;
	 * [2.0,2.25] and [2.1,2.1000000001] end before it. */
	struct query_params p = window("nsys", 2.5, 5.0);
	const char *t = run2(&pr, &p);
	HAS(t, "\"total\":3,");
	CHECK_STR(rowids(t), "3,5,8");
	close_pair(&pr);
}

TEST(nsys_zero_length_events)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = window("nsys", 0.25, 1.0);
	const char *t = run2(&pr, &p);
	CHECK_STR(rowids(t), "3,4,1");
	HAS(t, "\"start\":0.25,\"end\":0.25,\"name\":\"sampling_prep\"");
	p = window("nsys", 0.0, 0.25);
	CHECK_STR(rowids(run2(&pr, &p)), "3,4");
	p = window("nsys", nextafter(0.25, 1), 0.5);
	CHECK_STR(rowids(run2(&pr, &p)), "3");
	close_pair(&pr);
}

TEST(nsys_long_root_range_crossing_the_window)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = window("nsys", 3.0, 4.0);
	const char *t = run2(&pr, &p);
	HAS(t, "{\"total\":1,\"items\":[{\"profile\":0,\"worker\":\"decode-0\","
	       "\"rank\":0,\"start\":-1.0,\"end\":12.0,\"name\":\"[Executor] "
	       "forward step\",\"global_tid\":\"1694498927\",\"pid\":101,"
	       "\"tid\":111,\"definition\":{\"backend\":\"trtllm\",\"scope\":"
	       "\"host\",\"description\":\"Executor loop.\"},\"rowid\":3,"
	       "\"evidence_source\":4}],\"offset\":0,\"limit\":100,\"range\":"
	       "[3.0,4.0],\"attribution\":\"Shared worker/rank activity; "
	       "overlap does not establish request ownership.\",\"partial\":"
	       "true}");
	close_pair(&pr);
}

TEST(nsys_sort_ties_and_paging_after_sort)
{
	struct pair pr = open_pair(FIXTURE);
	/* two events start at 2.0 (rows 5 and 6): ordered by source_row */
	struct query_params p = window("nsys", 2.0, 2.2);
	CHECK_STR(rowids(run2(&pr, &p)), "3,5,6,7");
	p.offset = 1;
	p.limit = 2;
	{
		const char *t = run2(&pr, &p);
		HAS(t, "\"total\":4,");
		CHECK_STR(rowids(t), "5,6");
	}
	p.limit = 0;
	HAS(run2(&pr, &p), "{\"total\":4,\"items\":[],\"offset\":1,"
	                   "\"limit\":0,");
	close_pair(&pr);
}

TEST(nsys_unicode_name_and_filters)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	p.kind = "nsys";
	p.name = "ÜNICODE";
	t = run2(&pr, &p);
	HAS(t, "\"total\":2,");
	CHECK_STR(rowids(t), "6,10");
	HAS(t, "\"name\":\"Ünicode nested range\"");
	/* profile 0 is a real filter; frontend has no rank, so rank 0
	 * keeps profile 0 only; partial follows the selected profiles */
	query_params_init(&p);
	p.kind = "nsys";
	p.has_profile = 1;
	p.profile = 1;
	t = run2(&pr, &p);
	CHECK_STR(rowids(t), "1,2");
	HAS(t, "\"global_tid\":\"None\",\"pid\":null,\"tid\":null,"
	       "\"definition\":null");
	HAS(t, "\"partial\":false}");
	p.profile = 0;
	HAS(run2(&pr, &p), "\"total\":8,");
	query_params_init(&p);
	p.kind = "nsys";
	p.has_rank = 1;
	p.rank = 0;
	HAS(run2(&pr, &p), "\"total\":8,");
	close_pair(&pr);
}

TEST(nsys_lower_bound_keeps_tiny_negative_start)
{
	const char *doc = tmp_path("tiny.json");
	struct pair pr;
	struct query_params p;
	const char *t;
	write_file(doc,
	           "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	           "\"duration\":11.0},\"audit\":{},\"sources\":[],\"requests\":[],"
	           "\"sessions\":[],\"workers\":[],\"iterations\":[],"
	           "\"server_spans\":[],\"metrics\":[],\"profiles\":[{\"id\":0,"
	           "\"worker\":\"w\",\"rank\":null,\"names\":[\"a\",\"b\"],"
	           "\"name_definitions\":[],\"events\":[[-1e-30,10.0,0,\"1\",1],"
	           "[0.5,0.75,1,\"1\",2],[10.0,10.0,1,\"1\",3],"
	           "[10.5,10.5,1,\"1\",4]],\"truncated\":false}]}");
	pr = open_pair(doc);
	p = window("nsys", 10.0, 11.0);
	t = run2(&pr, &p);
	CHECK_STR(rowids(t), "1,3,4");
	HAS(t, "\"start\":-1e-30,\"end\":10.0");
	close_pair(&pr);
}

TEST(nsys_ties_across_profiles)
{
	const char *doc = tmp_path("ties.json");
	struct pair pr;
	struct query_params p;
	write_file(doc,
	           "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	           "\"duration\":5.0},\"profiles\":[{\"id\":0,\"worker\":\"w\","
	           "\"rank\":0,\"names\":[\"x\"],\"name_definitions\":[],"
	           "\"events\":[[1.0,2.0,0,\"1\",9],[1.0,1.5,0,\"1\",4]]},"
	           "{\"id\":1,\"worker\":\"v\",\"rank\":1,\"names\":[\"x\"],"
	           "\"name_definitions\":[],\"events\":[[0.5,1.0,0,\"2\",1],"
	           "[1.0,3.0,0,\"2\",2]]}]}");
	pr = open_pair(doc);
	query_params_init(&p);
	p.kind = "nsys";
	/* (start, profile, source_row): 0.5/p1/1, 1.0/p0/4, 1.0/p0/9, 1.0/p1/2 */
	CHECK_STR(rowids(run2(&pr, &p)), "1,4,9,2");
	p.offset = 2;
	p.limit = 1;
	CHECK_STR(rowids(run2(&pr, &p)), "9");
	close_pair(&pr);
}

TEST(rows_out_of_time_order)
{
	const char *doc = tmp_path("unsorted.json");
	struct pair pr;
	struct query_params p;
	const char *t;
	write_file(doc,
	           "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	           "\"duration\":10.0},\"profiles\":[{\"id\":0,\"worker\":\"w\","
	           "\"rank\":0,\"names\":[\"x\"],\"name_definitions\":[],"
	           "\"events\":[[5.0,5.5,0,\"1\",1],[1.0,1.5,0,\"1\",2],"
	           "[3.0,3.25,0,\"1\",3]],\"cpu\":{\"names\":[\"a\",\"b\"],"
	           "\"stacks\":[[0],[0,1]],\"samples\":[[4.0,\"1\",1,1],"
	           "[2.0,\"1\",0,2],[6.0,\"1\",1,3]]}}],\"metrics\":[{\"id\":0,"
	           "\"name\":\"s\",\"worker\":\"w\",\"rank\":null,\"temporal\":"
	           "\"setting\",\"points\":[[3.0,1,0,1],[1.0,2,0,2],[3.0,3,0,3],"
	           "[0.5,4,0,4]]}]}");
	pr = open_pair(doc);
	p = window("nsys", 1.25, 3.0);
	CHECK_STR(rowids(run2(&pr, &p)), "2,3");
	p = window("cpu", 1.0, 4.5);
	HAS(run2(&pr, &p), "{\"total\":2,\"items\":[{\"symbol\":\"a\","
	                   "\"samples\":2,\"fraction\":1.0},{\"symbol\":\"b\","
	                   "\"samples\":1,\"fraction\":0.5}]");
	p = window("metrics", 3.0, 10.0);
	p.points = 1;
	t = run2(&pr, &p);
	/* ordinal order; the setting before 3.0 is the one at 1.0 */
	HAS(t, "\"samples\":2,\"min\":1,\"max\":3,\"mean\":2.0,\"last\":3,"
	       "\"carried_setting\":[[1.0,2,0,2]],\"points\":[[3.0,1,0,1],"
	       "[3.0,3,0,3]],\"points_total\":2,");
	close_pair(&pr);
}

TEST(nsys_pid_tid_like_python_ints)
{
	const char *doc = tmp_path("gtid.json");
	struct pair pr;
	struct query_params p;
	const char *t;
	write_file(doc,
	           "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	           "\"duration\":10.0},\"profiles\":[{\"id\":0,\"worker\":\"w\","
	           "\"rank\":0,\"names\":[\"x\"],\"name_definitions\":[],"
	           "\"events\":[[1.0,2.0,0,\"-5\",1],[1.0,2.0,0,"
	           "\"123456789012345678901234567890\",2],[1.0,2.0,0,\"12a\",3]]}]}");
	pr = open_pair(doc);
	query_params_init(&p);
	p.kind = "nsys";
	t = run2(&pr, &p);
	/* Python: (g >> 24) & 0xFFFFFF, g & 0xFFFFFF */
	HAS(t, "\"global_tid\":\"-5\",\"pid\":16777215,\"tid\":16777211,");
	HAS(t, "\"pid\":14741070,\"tid\":4131538,");
	HAS(t, "\"global_tid\":\"12a\",\"pid\":null,\"tid\":null,");
	close_pair(&pr);
}

/* ---- cpu ---- */

TEST(cpu_distinct_symbols_per_sample)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	query_params_init(&p);
	p.kind = "cpu";
	/* stack 0 = main, poll, poll: poll counts once per sample */
	HAS(run2(&pr, &p),
	    "{\"total\":4,\"items\":[{\"symbol\":\"main\",\"samples\":5,"
	    "\"fraction\":1.0},{\"symbol\":\"poll\",\"samples\":2,\"fraction\":"
	    "0.4},{\"symbol\":\"tokenize\",\"samples\":2,\"fraction\":0.4},"
	    "{\"symbol\":\"[unresolved] 0x7f00\",\"samples\":1,\"fraction\":"
	    "0.2}],\"offset\":0,\"limit\":100,\"range\":[0.0,12.0],"
	    "\"total_samples\":5,\"attribution\":\"Inclusive process samples; "
	    "not per-request CPU time.\"}");
	p = window("cpu", 1.5, 3.0);
	HAS(run2(&pr, &p),
	    "{\"total\":3,\"items\":[{\"symbol\":\"main\",\"samples\":3,"
	    "\"fraction\":1.0},{\"symbol\":\"tokenize\",\"samples\":2,"
	    "\"fraction\":0.6666666666666666},{\"symbol\":\"[unresolved] "
	    "0x7f00\",\"samples\":1,\"fraction\":0.3333333333333333}]");
	p.worker = "decode-0";
	HAS(run2(&pr, &p), "{\"total\":0,\"items\":[],");
	close_pair(&pr);
}

/* ---- metrics ---- */

TEST(metrics_settings_carried_and_conflicts)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	query_params_init(&p);
	p.kind = "metrics";
	p.name = "log_decode_request_limit";
	/* both conflicting pre-run settings at -1.5 are carried into [0, 12] */
	HAS(run2(&pr, &p), "\"samples\":1,\"min\":32,\"max\":32,\"mean\":32.0,"
	                   "\"last\":32,\"carried_setting\":[[-1.5,8,2,1],"
	                   "[-1.5,16,2,2]]}]");
	p = window("metrics", 5.0, 12.0);
	p.name = "log_decode_request_limit";
	HAS(run2(&pr, &p), "\"carried_setting\":[[4.0,null,2,5]]}");
	p = window("metrics", 7.25, 12.0);
	p.name = "log_decode_request_limit";
	HAS(run2(&pr, &p), "\"carried_setting\":[[4.0,null,2,5]]}");
	p = window("metrics", 8.0, 9.0);
	p.name = "log_decode_request_limit";
	p.points = 1;
	HAS(run2(&pr, &p), "\"samples\":0,\"min\":null,\"max\":null,\"mean\":"
	                   "null,\"last\":null,\"carried_setting\":[[7.25,32,2,"
	                   "8]],\"points\":[],\"points_total\":0,"
	                   "\"points_truncated\":false}");
	/* no carried_setting for a sample series */
	p.name = "gpu_utilization";
	CHECK(!strstr(run2(&pr, &p), "carried_setting"));
	close_pair(&pr);
}

TEST(metrics_exact_statistics)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	query_params_init(&p);
	p.kind = "metrics";
	p.name = "gpu_utilization";
	HAS(run2(&pr, &p), "\"samples\":6,\"min\":0.0,\"max\":"
	                   "100000000000000000000,\"mean\":"
	                   "1.9741124012284924e+19,\"last\":12.5}]");
	p = window("metrics", 3.0, 4.0);
	p.name = "gpu_utilization";
	p.points = 1;
	HAS(run2(&pr, &p), "\"samples\":2,\"min\":18446744073709551615,"
	                   "\"max\":100000000000000000000,");
	HAS(run2(&pr, &p), "\"points\":[[3.0,18446744073709551615,3,13],"
	                   "[4.0,100000000000000000000,3,15]],\"points_total\":2,"
	                   "\"points_truncated\":false}");
	/* nulls are skipped by the statistics but counted by points_total;
	 * equal values keep the first */
	p = window("metrics", 0.0, 12.0);
	p.name = "num_requests_running";
	p.points = 1;
	HAS(run2(&pr, &p), "\"samples\":5,\"min\":0,\"max\":4,\"mean\":2.0,"
	                   "\"last\":0,\"points\":");
	HAS(run2(&pr, &p), "\"points_total\":6,\"points_truncated\":false}");
	close_pair(&pr);
}

TEST(metrics_rank_as_text_and_series_paging)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	p.kind = "metrics";
	p.has_rank = 1;
	p.rank = 0; /* "0" (scraped) and 0 (log) both match */
	t = run2(&pr, &p);
	HAS(t, "{\"total\":3,\"items\":[{\"id\":0,");
	HAS(t, "{\"id\":1,");
	HAS(t, "{\"id\":3,");
	p.offset = 1;
	p.limit = 1;
	t = run2(&pr, &p);
	HAS(t, "{\"total\":3,\"items\":[{\"id\":1,");
	CHECK(!strstr(t, "{\"id\":3,"));
	p.limit = 0;
	HAS(run2(&pr, &p), "{\"total\":3,\"items\":[],\"offset\":1,\"limit\":0,"
	                   "\"range\":[0.0,12.0]}");
	close_pair(&pr);
}

TEST(metrics_thousand_point_truncation)
{
	const char *doc = tmp_path("many.json");
	struct buf b;
	struct pair pr;
	struct query_params p;
	const char *t;
	buf_init(&b, 0);
	buf_puts(&b, "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":"
	             "\"0\",\"duration\":2000.0},\"metrics\":[{\"id\":0,\"name\":"
	             "\"m\",\"worker\":\"w\",\"rank\":null,\"labels\":{},"
	             "\"unit\":\"u\",\"points\":[");
	for (int k = 0; k < 1500; k++)
		buf_printf(&b, "%s[%d.0,%d,0,%d]", k ? "," : "", k, k % 7, k);
	buf_puts(&b, "]}]}");
	write_file(doc, b.data);
	buf_free(&b);
	pr = open_pair(doc);
	query_params_init(&p);
	p.kind = "metrics";
	p.points = 1;
	t = run2(&pr, &p);
	HAS(t, "\"points_total\":1500,\"points_truncated\":true}");
	HAS(t, ",[999.0,5,0,999]],\"points_total\"");
	CHECK(!strstr(t, "[1000.0,"));
	HAS(t, "\"samples\":1500,\"min\":0,\"max\":6,");
	p.points = 0;
	t = run2(&pr, &p);
	CHECK(!strstr(t, "points_total"));
	close_pair(&pr);
}

TEST(metrics_mean_beyond_double_range_is_null)
{
	const char *doc = tmp_path("huge.json");
	struct buf b;
	struct pair pr;
	struct query_params p;
	buf_init(&b, 0);
	buf_puts(&b, "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":"
	             "\"0\",\"duration\":10.0},\"metrics\":[{\"id\":0,\"name\":"
	             "\"m\",\"worker\":\"w\",\"rank\":null,\"points\":[[1.0,1");
	for (int k = 0; k < 400; k++)
		buf_putc(&b, '0');
	buf_puts(&b, ",0,1],[2.0,-5,0,2]]}]}");
	write_file(doc, b.data);
	buf_free(&b);
	pr = open_pair(doc);
	query_params_init(&p);
	p.kind = "metrics";
	HAS(run2(&pr, &p), "\"mean\":null,\"last\":-5}]");
	HAS(run2(&pr, &p), "\"samples\":2,\"min\":-5,\"max\":10000000000");
	close_pair(&pr);
}

/* ---- catalog kinds ---- */

TEST(iterations_rank_legacy_and_unaligned)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	p.kind = "iterations";
	p.has_rank = 1;
	p.rank = 0;
	t = run2(&pr, &p);
	HAS(t, "{\"total\":1,\"items\":[{\"worker\":\"decode-0\",\"host\":"
	       "\"nodeA\",\"iteration\":901,");
	HAS(t, "\"unaligned_rows\":1,\"attribution\":\"Shared batch "
	       "observations with recorded timestamp precision and rank scope; "
	       "not per-request execution time.\"}");
	p.rank = 1; /* the legacy row matches on global_rank 1 */
	t = run2(&pr, &p);
	HAS(t, "{\"total\":2,");
	HAS(t, "\"iteration\":903,");
	HAS(t, "\"unaligned_rows\":0,");
	close_pair(&pr);
}

TEST(requests_filters_and_unicode_search)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	p.kind = "requests";
	p.min_ttft_ms = 900; /* req-001 has 2000.0, req-002 850.5 */
	t = run2(&pr, &p);
	HAS(t, "{\"total\":1,\"items\":[{\"id\":\"req-001\"");
	HAS(t, "\"raw_end_ns\":\"1790000007000000000\",\"span_count\":1}]");
	CHECK(!strstr(t, "\"lifecycle\""));
	query_params_init(&p);
	p.kind = "requests";
	p.search = "SUB-1";
	HAS(run2(&pr, &p), "{\"total\":1,\"items\":[{\"id\":\"req-002\"");
	/* an empty worker is no filter; an empty session is an exact one */
	query_params_init(&p);
	p.kind = "requests";
	p.worker = "";
	HAS(run2(&pr, &p), "{\"total\":4,");
	p.worker = NULL;
	p.session = "";
	HAS(run2(&pr, &p), "{\"total\":0,");
	p = window("requests", 7.0, 12.0); /* req-001 ends at 7.0 */
	HAS(run2(&pr, &p), "{\"total\":");
	CHECK(strstr(run2(&pr, &p), "\"id\":\"req-001\"") != NULL);
	close_pair(&pr);
}

TEST(profiles_shape)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	p.kind = "profiles";
	p.has_profile = 1;
	p.profile = 1;
	t = run2(&pr, &p);
	HAS(t, "{\"total\":1,\"items\":[{\"id\":1,\"worker\":\"frontend\"");
	HAS(t, "\"diagnostics\":[\"Example diagnostic line\"],\"event_count\":2,"
	       "\"cpu_samples\":5}]");
	CHECK(!strstr(t, "\"names\""));
	CHECK(!strstr(t, "\"events\""));
	close_pair(&pr);
}

TEST(summary_request_lifecycle)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *t;
	query_params_init(&p);
	t = run2(&pr, &p);
	HAS(t, "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"job\":\"example-run\"");
	HAS(t, "\"counts\":{\"requests\":4,\"sessions\":3,\"workers\":2,"
	       "\"metrics\":5,\"profiles\":2,\"iterations\":4}}");
	p.kind = "lifecycle";
	p.request_id = "req-001";
	HAS(run2(&pr, &p), "{\"request\":\"req-001\",\"available\":true");
	p.kind = "request";
	HAS(run2(&pr, &p), "\"spans\":[");
	p.request_id = "req-404";
	fail2(&pr, &p, ERR_USAGE, "Unknown client request: req-404");
	p.request_id = NULL;
	fail2(&pr, &p, ERR_USAGE, "Unknown client request: None");
	close_pair(&pr);
}

/* ---- validation ---- */

TEST(validation_messages_in_order)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *range = "Require 0 <= start < end <= run duration "
	                    "(seconds from origin_ns)";
	const char *page = "Require integer offset >= 0 and 0 <= limit <= 1000";
	const char *ttft = "min_ttft_ms must be finite and nonnegative";

	p = window("nope", 4, 3);
	p.limit = 5000;
	fail2(&pr, &p, ERR_USAGE, range);
	p = window("nope", 0, 12.5);
	fail2(&pr, &p, ERR_USAGE, range);
	p = window("nope", -0.5, 1);
	fail2(&pr, &p, ERR_USAGE, range);
	p = window("nope", 3, 3);
	fail2(&pr, &p, ERR_USAGE, range);
	p = window("nope", NAN, 3);
	fail2(&pr, &p, ERR_USAGE, range);
	query_params_init(&p);
	p.kind = "nope";
	p.limit = 1001;
	p.min_ttft_ms = -1;
	fail2(&pr, &p, ERR_USAGE, page);
	p.limit = 1000;
	p.offset = -1;
	fail2(&pr, &p, ERR_USAGE, page);
	p.offset = 0;
	fail2(&pr, &p, ERR_USAGE, ttft);
	p.min_ttft_ms = INFINITY;
	fail2(&pr, &p, ERR_USAGE, ttft);
	p.min_ttft_ms = 0;
	fail2(&pr, &p, ERR_USAGE,
	      "Unknown query kind 'nope'; choose from summary, requests, "
	      "request, lifecycle, metrics, profiles, nsys, cpu, iterations, "
	      "sources, server_spans, sessions, workers, families");
	/* limit 1000 and the full range are fine */
	p.kind = "sources";
	p.has_start = p.has_end = 1;
	p.start = 0;
	p.end = 12;
	HAS(run2(&pr, &p), "\"limit\":1000,\"range\":[0.0,12.0]}");
	close_pair(&pr);
}

TEST(params_from_json_types)
{
	struct query_params p;
	struct err e;
	json_t *j;
#define BAD(text, want)                                                     \
	do {                                                               \
		j = json_loads(text, 0, NULL);                             \
		err_clear(&e);                                             \
		CHECK(query_params_from_json(j, &p, &e) == ERR_USAGE);     \
		CHECK_STR(e.msg, want);                                    \
		json_decref(j);                                            \
	} while (0)
	BAD("{\"limit\":\"5\"}", "limit must be an integer or null");
	BAD("{\"limit\":5.0}", "limit must be an integer or null");
	BAD("{\"rank\":true}", "rank must be an integer or null");
	BAD("{\"start\":\"1\"}", "start must be a number or null");
	BAD("{\"worker\":3}", "worker must be a string or null");
	BAD("{\"points\":1}", "points must be a boolean or null");
#undef BAD
	j = json_loads("{\"kind\":\"nsys\",\"start\":1,\"end\":2.5,\"rank\":0,"
	               "\"profile\":null,\"limit\":0,\"points\":true,"
	               "\"other\":[1]}",
	               0, NULL);
	CHECK(query_params_from_json(j, &p, &e) == 0);
	CHECK_STR(p.kind, "nsys");
	CHECK(p.has_start && p.start == 1.0 && p.has_end && p.end == 2.5);
	CHECK(p.has_rank && p.rank == 0 && !p.has_profile);
	CHECK(p.limit == 0 && p.points == 1 && p.offset == 0);
	json_decref(j);
}

/* ---- clones on threads ---- */

struct worker {
	struct dataset *ds;
	const char *want[4];
	int bad;
};

static const char *const thread_kinds[4] = {"nsys", "metrics", "cpu",
                                            "requests"};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int r = 0; r < 50; r++) {
		for (int k = 0; k < 4; k++) {
			struct query_params p;
			struct buf b;
			struct err e;
			query_params_init(&p);
			p.kind = thread_kinds[k];
			p.points = 1;
			p.name = k == 0 ? "ÜNICODE" : NULL;
			buf_init(&b, 0);
			if (query_run(w->ds, &p, &b, &e) || strcmp(b.data, w->want[k]))
				w->bad++;
			buf_free(&b);
		}
	}
	return NULL;
}

TEST(clones_answer_on_worker_threads)
{
	struct pair pr = open_pair(FIXTURE);
	for (int backend = 0; backend < 2; backend++) {
		struct worker w[4];
		pthread_t th[4];
		char *want[4];
		for (int k = 0; k < 4; k++) {
			struct query_params p;
			struct buf b;
			struct err e;
			query_params_init(&p);
			p.kind = thread_kinds[k];
			p.points = 1;
			p.name = k == 0 ? "ÜNICODE" : NULL;
			buf_init(&b, 0);
			CHECK(query_run(pr.ds[backend], &p, &b, &e) == 0);
			want[k] = buf_detach(&b, NULL);
		}
		for (int t = 0; t < 4; t++) {
			struct err e;
			memset(&w[t], 0, sizeof w[t]);
			CHECK(dataset_clone(pr.ds[backend], &w[t].ds, &e) == 0);
			for (int k = 0; k < 4; k++)
				w[t].want[k] = want[k];
		}
		/* the clones outlive the original handle */
		if (backend == 0) {
			dataset_close(pr.ds[0]);
			pr.ds[0] = NULL;
		}
		for (int t = 0; t < 4; t++)
			CHECK(pthread_create(&th[t], NULL, worker_main, &w[t]) == 0);
		for (int t = 0; t < 4; t++) {
			pthread_join(th[t], NULL);
			CHECK(w[t].bad == 0);
			dataset_close(w[t].ds);
		}
		for (int k = 0; k < 4; k++)
			free(want[k]);
	}
	close_pair(&pr);
}

/* ---- opening ---- */

TEST(open_errors)
{
	struct dataset *ds = NULL;
	struct err e;
	const char *junk = tmp_path("junk.bin");
	const char *dir = tmp_path("emptydir");
	const char *v2 = tmp_path("v2.sqlite");

	err_clear(&e);
	CHECK(dataset_open(tmp_path("missing"), &ds, &e) == ERR_DATA);
	CHECK(strstr(e.msg, "No such file or directory") != NULL);
	write_file(junk, "PK\3\4 not a dataset at all");
	CHECK(dataset_open(junk, &ds, &e) == ERR_DATA);
	CHECK(strstr(e.msg, "is neither a DSight SQLite cache nor an evidence "
	                    "document") != NULL);
	mkdir(dir, 0755);
	CHECK(dataset_open(dir, &ds, &e) == ERR_DATA);
	CHECK(strstr(e.msg, "neither trace-data.sqlite nor "
	                    "trace-data.json.gz") != NULL);
	CHECK(mkcache(FIXTURE, v2, 2, "0123456789abcdef0123456789abcdef") == 0);
	CHECK(dataset_open(v2, &ds, &e) == ERR_DATA);
	CHECK(strncmp(e.msg, "Unsupported DSight SQLite version: 2; expected 1",
	              48) == 0);
	CHECK(strstr(e.msg, "rebuild") != NULL);
	CHECK(ds == NULL);
}

TEST(report_directory_prefers_sqlite)
{
	struct dataset *ds = NULL;
	struct err e;
	const char *dir = tmp_path("report");
	char path[512];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/trace-data.sqlite", dir);
	CHECK(mkcache(FIXTURE, path, 1, "feedfeedfeedfeedfeedfeedfeedfeed") == 0);
	CHECK(dataset_open(dir, &ds, &e) == 0);
	CHECK_STR(dataset_generation(ds), "feedfeedfeedfeedfeedfeedfeedfeed");
	CHECK(strstr(dataset_data_path(ds), "trace-data.sqlite") != NULL);
	dataset_close(ds);
	CHECK(dataset_open(FIXTURE, &ds, &e) == 0);
	CHECK(strlen(dataset_generation(ds)) == 32);
	dataset_close(ds);
}

TEST(cache_rewritten_in_place_is_detected)
{
	struct dataset *ds = NULL, *clone = NULL;
	struct err e;
	struct buf b;
	struct query_params p;
	const char *cache = tmp_path("rewritten.sqlite");
	sqlite3 *db;

	CHECK(mkcache(FIXTURE, cache, 1, "11111111111111111111111111111111") == 0);
	CHECK(dataset_open(cache, &ds, &e) == 0);
	CHECK(dataset_clone(ds, &clone, &e) == 0);
	query_params_init(&p);
	p.kind = "nsys";
	buf_init(&b, 0);
	CHECK(query_run(ds, &p, &b, &e) == 0);
	/* rewrite the generation in place with a second connection */
	CHECK(sqlite3_open(cache, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE catalog SET generation = "
	                       "'22222222222222222222222222222222'",
	                   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	const char *kinds[] = {"nsys", "cpu", "metrics"};
	for (int k = 0; k < 3; k++) {
		p.kind = kinds[k];
		buf_reset(&b);
		err_clear(&e);
		CHECK(query_run(ds, &p, &b, &e) == ERR_REBUILT);
		CHECK_STR(e.msg, "DSight dataset was rebuilt; reopen it before "
		                 "querying");
		err_clear(&e);
		CHECK(query_run(clone, &p, &b, &e) == ERR_REBUILT);
	}
	buf_free(&b);
	dataset_close(ds);
	dataset_close(clone);
}

TEST(readonly_open_keeps_mtime_and_files)
{
	struct dataset *ds = NULL;
	struct err e;
	struct stat before, after, journal;
	const char *dir = tmp_path("ro");
	char cache[512], side[600];
	struct query_params p;
	struct buf b;

	mkdir(dir, 0755);
	snprintf(cache, sizeof cache, "%s/trace-data.sqlite", dir);
	CHECK(mkcache(FIXTURE, cache, 1, "33333333333333333333333333333333") == 0);
	{
		struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
		CHECK(utimensat(AT_FDCWD, cache, ts, 0) == 0);
	}
	CHECK(stat(cache, &before) == 0);
	CHECK(dataset_open(dir, &ds, &e) == 0);
	buf_init(&b, 0);
	for (const char *const *k = query_kinds; *k; k++) {
		query_params_init(&p);
		p.kind = *k;
		p.request_id = "req-001";
		p.points = 1;
		buf_reset(&b);
		CHECK(query_run(ds, &p, &b, &e) == 0);
	}
	buf_free(&b);
	dataset_close(ds);
	CHECK(stat(cache, &after) == 0);
	CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	      after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	CHECK(after.st_size == before.st_size);
	snprintf(side, sizeof side, "%s-journal", cache);
	CHECK(stat(side, &journal) != 0);
	snprintf(side, sizeof side, "%s-wal", cache);
	CHECK(stat(side, &journal) != 0);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(nsys_boundaries_touching_from_either_side);
	RUN(nsys_zero_length_events);
	RUN(nsys_long_root_range_crossing_the_window);
	RUN(nsys_sort_ties_and_paging_after_sort);
	RUN(nsys_unicode_name_and_filters);
	RUN(nsys_lower_bound_keeps_tiny_negative_start);
	RUN(nsys_ties_across_profiles);
	RUN(rows_out_of_time_order);
	RUN(nsys_pid_tid_like_python_ints);
	RUN(cpu_distinct_symbols_per_sample);
	RUN(metrics_settings_carried_and_conflicts);
	RUN(metrics_exact_statistics);
	RUN(metrics_rank_as_text_and_series_paging);
	RUN(metrics_thousand_point_truncation);
	RUN(metrics_mean_beyond_double_range_is_null);
	RUN(iterations_rank_legacy_and_unaligned);
	RUN(requests_filters_and_unicode_search);
	RUN(profiles_shape);
	RUN(summary_request_lifecycle);
	RUN(validation_messages_in_order);
	RUN(params_from_json_types);
	RUN(clones_answer_on_worker_threads);
	RUN(open_errors);
	RUN(report_directory_prefers_sqlite);
	RUN(cache_rewritten_in_place_is_detected);
	RUN(readonly_open_keeps_mtime_and_files);
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			return 1;
	}
	return testlib_done();
}
