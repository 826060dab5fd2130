/* Unit tests of the Nsight importer (nsys, nsys_export, nsys_profile,
 * nsys_name, strdict) on small crafted exports. */
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ingest/capabilities.h"
#include "ingest/nsys.h"
#include "base/strdict.h"
#include "ingest/nsys_name.h"
#include "testlib.h"

/* Until the evidence module lands, a minimal capabilities fallback. */
__attribute__((weak)) json_t *capabilities_compute(const json_t *catalog,
                                                    const uint64_t *sp,
                                                    size_t ns)
{
	(void)sp;
	(void)ns;
	int nvtx = 0, cpu = 0;
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(catalog, "profiles"), i, p) {
		nvtx |= json_integer_value(json_object_get(p, "event_count")) > 0;
		cpu |= json_integer_value(json_object_get(
			json_object_get(p, "cpu"), "sample_count")) > 0;
	}
	return json_pack("{s:b,s:b,s:b}", "nvtx", nvtx, "cpu_samples", cpu,
	                 "nsight", nvtx || cpu);
}

static const char *DDL =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);"
	"CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);"
	"CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL);"
	"CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);"
	"CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER, threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);"
	"CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, kernelMode INTEGER, thread INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER, unwindMethod INTEGER NOT NULL, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));"
	"CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);"
	"INSERT INTO OSRT_API VALUES (1, 2, 0, 5, 1, 0);";

#define EPOCH INT64_C(1790000000123456789)
#define SYSCLK INT64_C(5000000)
#define GT(pid, tid) (((int64_t)(pid) << 24) | (tid))

static char dir[256];

static void setup_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_nsys.%d", (int)getpid());
	mkdir(dir, 0700);
}

static void cleanup_dir(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

/* Creates dir/name with the DDL, a capture [0, 10 s] session-relative,
 * and extra SQL (printf format). */
static const char *make_export(const char *name, const char *fmt, ...)
{
	static char path[512];
	char sql[8192];
	sqlite3 *db;
	va_list ap;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = 0;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
	if (system(cmd) != 0)
		return NULL;
	*slash = '/';
	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	snprintf(sql, sizeof sql,
	         "%s INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES "
	         "(%lld, 'x', 'y', %lld); INSERT INTO ANALYSIS_DETAILS VALUES "
	         "(0, 10000000000, %lld, %lld);",
	         DDL, (long long)EPOCH, (long long)SYSCLK, (long long)SYSCLK,
	         (long long)(SYSCLK + 10000000000LL));
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "ddl: %s\n", err);
		exit(1);
	}
	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sql: %s\n", err);
		exit(1);
	}
	sqlite3_close(db);
	return path;
}

/* A sink collecting rows as text lines. */
struct coll {
	char lines[64][160];
	int n;
	char samples[64][160];
	int ns;
	int64_t max_ordinal;
	int64_t count;
};

static int on_event(void *ctx, int64_t profile, int64_t ordinal,
                    const struct row_event *r, struct err *e)
{
	struct coll *c = ctx;
	(void)e;
	if (ordinal != c->count)
		c->max_ordinal = -100; /* ordinals must be dense */
	c->count++;
	if (c->n < 64)
		snprintf(c->lines[c->n++], 160, "%lld %.17g %.17g %lld %.*s %lld",
		         (long long)profile, r->start, r->end, (long long)r->name,
		         (int)r->tid_len, r->tid, (long long)r->source_row);
	return 0;
}

static int on_sample(void *ctx, int64_t profile, int64_t ordinal,
                     const struct row_sample *r, struct err *e)
{
	struct coll *c = ctx;
	(void)e;
	if (c->ns < 64)
		snprintf(c->samples[c->ns++], 160, "%lld %lld %.17g %.*s %lld %lld",
		         (long long)profile, (long long)ordinal, r->time,
		         (int)r->tid_len, r->tid, (long long)r->stack,
		         (long long)r->source_row);
	return 0;
}

static json_t *run(const char *const *paths, size_t n, json_t *doc,
                   int64_t max, struct coll *c, int *rc, struct err *e)
{
	struct nsys_options o = {.max_events = max, .job = "j"};
	struct row_sink sink = {.ctx = c, .event = on_event,
	                             .sample = on_sample};
	memset(c, 0, sizeof *c);
	err_clear(e);
	*rc = nsys_import_all(paths, n, &doc, &o, &sink, NULL, e);
	return doc;
}

static char *dumps(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

#define JGET(o, k) json_object_get((o), (k))

TEST(ranges_selection_order_and_clock)
{
	setup_dir();
	/* Session-relative ns; the capture is [0, 10e9]. */
	const char *p = make_export("nodeA_decode_w0_profile_rank3.sqlite",
		"INSERT INTO StringIds VALUES (1, 'from_id'), (2, 'thr-main');"
		"INSERT INTO ThreadNames VALUES (2, 0, %lld);"
		"INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0,'h','HostName',1,'envhost');"
		/* rowid: start end text textId gtid */
		"INSERT INTO NVTX_EVENTS (rowid,start,end,eventType,text,textId,globalTid) VALUES"
		" (1, 5000000000, 6000000000, 59, 'b', NULL, %lld),"
		" (2, 1000000001, 1000000001, 59, NULL, 1, %lld),"
		" (3, 1000000001, 2000000000, 59, NULL, NULL, NULL),"
		" (4, 2000000000, NULL, 34, 'mark', NULL, %lld),"
		" (5, 3000000000, 2000000000, 59, 'bad', NULL, %lld),"
		" (6, -5, 100, 59, 'early', NULL, %lld),"
		" (7, 9000000000, 10000000001, 59, 'late', NULL, %lld),"
		" (8, 7000000000, 7500000000, 59, 'from_id', 7, %lld),"
		" (9, 7000000000, 7500000000, 59, 'b', NULL, %lld),"
		" (10, 0, 10000000000, 59, 'root', NULL, %lld);",
		(long long)GT(100, 7), (long long)GT(100, 7), (long long)GT(100, 7),
		(long long)GT(100, 7), (long long)GT(100, 7), (long long)GT(100, 7),
		(long long)GT(100, 7), (long long)GT(200, 9), (long long)GT(100, 7),
		(long long)GT(100, 7));
	CHECK(p != NULL);
	struct coll c;
	struct err e;
	int rc;
	/* The document's origin is 123 ns before the session start. */
	json_t *doc = json_pack("{s:s,s:{s:s,s:f,s:[s]},s:[],s:[],s:[]}",
		"schema", "srtctl-trace/1", "meta", "origin_ns",
		"1790000000123456666", "duration", 20.0, "warnings", "old",
		"sources", "workers", "profiles");
	json_t *src = json_pack("{s:i}", "id", 0);
	json_array_append_new(JGET(doc, "sources"), src);
	doc = run(&p, 1, doc, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	/* Expected: order by start, end desc, rowid; times (ns + 123)/1e9. */
	CHECK_EQ(c.n, 6);
	char want[6][160];
	snprintf(want[0], 160, "0 %.17g %.17g 0 %lld 10", 123 / 1e9,
	         10000000123 / 1e9, (long long)GT(100, 7));
	snprintf(want[1], 160, "0 %.17g %.17g 1 None 3", 1000000124 / 1e9,
	         2000000123 / 1e9);
	snprintf(want[2], 160, "0 %.17g %.17g 2 %lld 2", 1000000124 / 1e9,
	         1000000124 / 1e9, (long long)GT(100, 7));
	snprintf(want[3], 160, "0 %.17g %.17g 3 %lld 1", 5000000123 / 1e9,
	         6000000123 / 1e9, (long long)GT(100, 7));
	snprintf(want[4], 160, "0 %.17g %.17g 2 %lld 8", 7000000123 / 1e9,
	         7500000123 / 1e9, (long long)GT(200, 9));
	snprintf(want[5], 160, "0 %.17g %.17g 3 %lld 9", 7000000123 / 1e9,
	         7500000123 / 1e9, (long long)GT(100, 7));
	for (int i = 0; i < 6 && i < c.n; i++)
		CHECK_STR(c.lines[i], want[i]);
	CHECK_EQ(c.max_ordinal, 0);
	json_t *prof = json_array_get(JGET(doc, "profiles"), 0);
	char *s = dumps(JGET(prof, "names"));
	CHECK_STR(s, "[\"root\",\"\",\"from_id\",\"b\"]");
	free(s);
	s = dumps(JGET(prof, "threads"));
	char tw[400];
	snprintf(tw, sizeof tw, "[{\"global_tid\":\"%lld\",\"pid\":100,\"tid\":7,"
	         "\"name\":\"thr-main\"},{\"global_tid\":\"None\",\"pid\":null,"
	         "\"tid\":null,\"name\":null},{\"global_tid\":\"%lld\",\"pid\":200,"
	         "\"tid\":9,\"name\":null}]", (long long)GT(100, 7),
	         (long long)GT(200, 9));
	CHECK_STR(s, tw);
	free(s);
	CHECK_EQ(json_integer_value(JGET(prof, "id")), 0);
	CHECK_EQ(json_integer_value(JGET(prof, "evidence_source")), 1);
	CHECK_STR(json_string_value(JGET(prof, "worker")), "decode-0");
	CHECK_EQ(json_integer_value(JGET(prof, "rank")), 3);
	CHECK_STR(json_string_value(JGET(prof, "host")), "envhost");
	CHECK_STR(json_string_value(JGET(prof, "host_source")),
	          "Nsight environment");
	CHECK_EQ(json_integer_value(JGET(prof, "invalid_or_boundary_ranges")), 3);
	CHECK_EQ(json_integer_value(JGET(prof, "event_count")), 6);
	CHECK_EQ(json_array_size(JGET(prof, "events")), 0);
	CHECK(JGET(prof, "truncated") == json_false());
	CHECK(JGET(prof, "cuda") == json_false());
	CHECK(json_real_value(json_array_get(JGET(prof, "capture"), 0)) ==
	      123 / 1e9);
	CHECK(json_real_value(json_array_get(JGET(prof, "capture"), 1)) ==
	      10000000123 / 1e9);
	CHECK(json_real_value(json_array_get(JGET(prof, "imported_range"), 1)) ==
	      10000000123 / 1e9);
	json_t *audit = JGET(doc, "audit");
	CHECK_EQ(json_integer_value(JGET(audit, "nvtx_without_end")), 1);
	CHECK_EQ(json_integer_value(JGET(audit, "nvtx_invalid_or_boundary")), 3);
	CHECK_EQ(json_integer_value(JGET(audit, "nsight_selected_events")), 6);
	json_t *src1 = json_array_get(JGET(doc, "sources"), 1);
	CHECK_STR(json_string_value(JGET(src1, "kind")), "nsight_sqlite");
	CHECK_EQ(json_string_length(JGET(src1, "sha256")), 64);
	CHECK(JGET(src1, "path") && json_string_value(JGET(src1, "path"))[0] == '/');
	json_t *w = json_array_get(JGET(doc, "workers"), 0);
	s = dumps(w);
	CHECK_STR(s, "{\"id\":\"decode-0\",\"role\":\"decode\",\"index\":0,"
	          "\"host\":\"envhost\",\"hosts\":[\"envhost\"],"
	          "\"process_epochs\":[],\"profiles\":[0],\"metrics\":[]}");
	free(s);
	s = dumps(JGET(JGET(doc, "meta"), "warnings"));
	CHECK_STR(s, "[\"old\"]");
	free(s);
	CHECK(JGET(JGET(doc, "capabilities"), "nvtx") == json_true());
	json_decref(doc);
	cleanup_dir();
}

TEST(cap_at_n_and_n_plus_one)
{
	setup_dir();
	const char *p = make_export("x_agg_w1_e2_profile_gpu0-1.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES"
		" (1,2,59,'a'),(3,4,59,'b'),(5,6,59,'c'),(7,NULL,34,'m');");
	struct coll c;
	struct err e;
	int rc;
	json_t *doc = run(&p, 1, NULL, 3, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	json_t *prof = json_array_get(JGET(doc, "profiles"), 0);
	CHECK(JGET(prof, "truncated") == json_false());
	CHECK_EQ(c.n, 3);
	CHECK_EQ(json_array_size(JGET(JGET(doc, "meta"), "warnings")), 0);
	CHECK_STR(json_string_value(JGET(prof, "worker")), "agg-1");
	CHECK_EQ(json_integer_value(JGET(prof, "engine")), 2);
	CHECK_STR(json_string_value(JGET(prof, "gpus")), "0-1");
	CHECK(json_is_null(JGET(prof, "rank")));
	CHECK_STR(json_string_value(JGET(prof, "host")), "x");
	CHECK_STR(json_string_value(JGET(prof, "host_source")), "filename");
	json_decref(doc);
	doc = run(&p, 1, NULL, 2, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	prof = json_array_get(JGET(doc, "profiles"), 0);
	CHECK(JGET(prof, "truncated") == json_true());
	CHECK_EQ(c.n, 2);
	CHECK_EQ(json_integer_value(JGET(prof, "event_count")), 2);
	CHECK_STR(json_string_value(json_array_get(JGET(JGET(doc, "meta"),
	                                                "warnings"), 0)),
	          "x_agg_w1_e2_profile_gpu0-1.sqlite: NVTX event limit reached "
	          "(2); query coverage is partial.");
	json_decref(doc);
	cleanup_dir();
}

TEST(nsight_only_document)
{
	setup_dir();
	const char *a = make_export("d/b/h_frontend_0.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (1,2,59,'a');");
	(void)a;
	const char *b = make_export("d/a.sqlite",
		"UPDATE ANALYSIS_DETAILS SET startTime = startTime - 1000000000;"
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (-5,2,59,'z');");
	(void)b;
	char dpath[300];
	snprintf(dpath, sizeof dpath, "%s/d", dir);
	const char *paths[] = {dpath};
	struct coll c;
	struct err e;
	int rc;
	json_t *doc = run(paths, 1, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	json_t *meta = JGET(doc, "meta");
	char org[32];
	snprintf(org, sizeof org, "%lld", (long long)(EPOCH - 1000000000));
	CHECK_STR(json_string_value(JGET(meta, "origin_ns")), org);
	CHECK_EQ(json_real_value(JGET(meta, "duration")), 11.0);
	CHECK_STR(json_string_value(JGET(meta, "job")), "j");
	CHECK_STR(json_string_value(JGET(doc, "schema")), "srtctl-trace/1");
	/* Byte order of relative paths: a.sqlite before b/h_frontend_0. */
	json_t *p0 = json_array_get(JGET(doc, "profiles"), 0);
	json_t *p1 = json_array_get(JGET(doc, "profiles"), 1);
	CHECK_STR(json_string_value(JGET(p0, "file")), "a.sqlite");
	CHECK_STR(json_string_value(JGET(p0, "worker")), "unmapped");
	CHECK(json_is_null(JGET(p0, "host")));
	CHECK_STR(json_string_value(JGET(p0, "host_source")), "unknown");
	CHECK_STR(json_string_value(JGET(p1, "worker")), "frontend");
	CHECK_EQ(json_integer_value(JGET(p1, "evidence_source")), 1);
	CHECK_EQ(c.n, 2);
	char w0[100];
	snprintf(w0, sizeof w0, "0 %.17g %.17g 0 None 1", 999999995 / 1e9,
	         1000000002 / 1e9);
	CHECK_STR(c.lines[0], w0);
	CHECK_EQ(json_array_size(JGET(doc, "requests")), 0);
	CHECK_EQ(json_array_size(JGET(doc, "workers")), 2);
	json_decref(doc);
	cleanup_dir();
}

TEST(cpu_samples_stacks)
{
	setup_dir();
	const char *p = make_export("h_frontend_3.sqlite",
		"INSERT INTO StringIds VALUES (1,'main'),(2,'poll'),(3,'0x7f00'),(4,'tok');"
		"INSERT INTO COMPOSITE_EVENTS VALUES (10, 3000, 0, 0, %lld, 1),"
		" (11, 1000, 0, 0, %lld, 1), (12, 2000, 0, 0, %lld, 1),"
		" (13, 4000, 0, 0, %lld, 1);"
		"INSERT INTO SAMPLING_CALLCHAINS (id,symbol,module,unresolved,unwindMethod,stackDepth) VALUES"
		" (11, 2, 1, 0, 1, 1), (11, 1, 1, 0, 1, 0), (11, 2, 1, 0, 1, 2),"
		" (12, 3, 1, 1, 1, 0), (12, 1, 1, 0, 1, 1),"
		" (10, 2, 1, 0, 1, 2), (10, 1, 1, 0, 1, 0), (10, 2, 1, 0, 1, 1),"
		" (13, 4, 1, 0, 1, 0);"
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid) VALUES (1,2,59,'a',%lld);",
		(long long)GT(7, 1), (long long)GT(7, 1), (long long)GT(7, 2),
		(long long)GT(7, 5), (long long)GT(7, 9));
	struct coll c;
	struct err e;
	int rc;
	json_t *doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	json_t *cpu = JGET(json_array_get(JGET(doc, "profiles"), 0), "cpu");
	char *s = dumps(JGET(cpu, "names"));
	CHECK_STR(s, "[\"main\",\"poll\",\"[unresolved] 0x7f00\",\"tok\"]");
	free(s);
	s = dumps(JGET(cpu, "stacks"));
	CHECK_STR(s, "[[0,1,1],[2,0],[3]]");
	free(s);
	CHECK_EQ(json_integer_value(JGET(cpu, "pid")), 7);
	CHECK_EQ(json_integer_value(JGET(cpu, "sample_count")), 4);
	CHECK_EQ(c.ns, 4);
	char w[4][100];
	snprintf(w[0], 100, "0 0 %.17g %lld 0 11", 1000 / 1e9, (long long)GT(7, 1));
	snprintf(w[1], 100, "0 1 %.17g %lld 1 12", 2000 / 1e9, (long long)GT(7, 2));
	snprintf(w[2], 100, "0 2 %.17g %lld 0 10", 3000 / 1e9, (long long)GT(7, 1));
	snprintf(w[3], 100, "0 3 %.17g %lld 2 13", 4000 / 1e9, (long long)GT(7, 5));
	for (int i = 0; i < 4; i++)
		CHECK_STR(c.samples[i], w[i]);
	/* Threads: range thread first, then sample-only threads in order. */
	s = dumps(JGET(json_array_get(JGET(doc, "profiles"), 0), "threads"));
	char tw[400];
	snprintf(tw, sizeof tw, "[{\"global_tid\":\"%lld\",\"pid\":7,\"tid\":9,"
	         "\"name\":null},{\"global_tid\":\"%lld\",\"pid\":7,\"tid\":1,"
	         "\"name\":null},{\"global_tid\":\"%lld\",\"pid\":7,\"tid\":2,"
	         "\"name\":null},{\"global_tid\":\"%lld\",\"pid\":7,\"tid\":5,"
	         "\"name\":null}]", (long long)GT(7, 9), (long long)GT(7, 1),
	         (long long)GT(7, 2), (long long)GT(7, 5));
	CHECK_STR(s, tw);
	free(s);
	json_decref(doc);
	cleanup_dir();
}

TEST(errors_and_warnings)
{
	setup_dir();
	struct coll c;
	struct err e;
	int rc;
	char path[300];
	/* Not SQLite. */
	snprintf(path, sizeof path, "%s/notes.sqlite", dir);
	FILE *f = fopen(path, "w");
	fputs("hello, this is not a database at all", f);
	fclose(f);
	const char *p = path;
	json_t *doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && doc == NULL);
	CHECK(strstr(e.msg, "notes.sqlite: not an SQLite database") != NULL);
	/* Corrupt: a valid header, then garbage pages. */
	const char *good = make_export("c.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (1,2,59,'a');");
	snprintf(path, sizeof path, "%s", good);
	f = fopen(path, "r+b");
	fseek(f, 100, SEEK_SET);
	for (int i = 0; i < 4000; i++)
		fputc(0xA5, f);
	fclose(f);
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && doc == NULL);
	CHECK(strstr(e.msg, "c.sqlite") != NULL);
	fprintf(stderr, "  corrupt: %s\n", e.msg);
	/* Missing file. */
	snprintf(path, sizeof path, "%s/none.sqlite", dir);
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && strstr(e.msg, "none.sqlite") != NULL);
	/* Missing tables: warning, skipped, the others imported. */
	char d2[300];
	snprintf(d2, sizeof d2, "%s/mix", dir);
	make_export("mix/ok.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (1,2,59,'a');");
	make_export("mix/partial.sqlite", "DROP TABLE NVTX_EVENTS; DROP TABLE StringIds;");
	p = d2;
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	CHECK_EQ(json_array_size(JGET(doc, "profiles")), 1);
	const char *w = json_string_value(json_array_get(
		JGET(JGET(doc, "meta"), "warnings"), 0));
	CHECK(w && strstr(w, "partial.sqlite") && strstr(w, "NVTX_EVENTS") &&
	      strstr(w, "StringIds") && strstr(w, "skipped"));
	json_decref(doc);
	/* Only .nsys-rep files: a warning, and nothing importable. */
	char d3[300];
	snprintf(d3, sizeof d3, "%s/reps", dir);
	mkdir(d3, 0700);
	snprintf(path, sizeof path, "%s/reps/a.nsys-rep", dir);
	f = fopen(path, "w");
	fputs("x", f);
	fclose(f);
	const char *two[] = {d3, good};
	make_export("c.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (1,2,59,'a');");
	doc = run(two, 2, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	w = json_string_value(json_array_get(JGET(JGET(doc, "meta"), "warnings"), 0));
	CHECK(w && strstr(w, "reps: holds only .nsys-rep files") != NULL);
	json_decref(doc);
	p = d3;
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && strstr(e.msg, "no importable Nsight export"));
	/* A .nsys-rep named directly. */
	p = path;
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && strstr(e.msg, "nsys export --type sqlite"));
	cleanup_dir();
}

TEST(export_unchanged)
{
	setup_dir();
	const char *p = make_export("u.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES (3,2,59,'a'),(1,2,59,'b');");
	struct stat a, b;
	char before[65536], after[65536];
	FILE *f = fopen(p, "rb");
	size_t na = fread(before, 1, sizeof before, f);
	fclose(f);
	stat(p, &a);
	usleep(20000);
	struct coll c;
	struct err e;
	int rc;
	json_t *doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	json_decref(doc);
	stat(p, &b);
	f = fopen(p, "rb");
	size_t nb = fread(after, 1, sizeof after, f);
	fclose(f);
	CHECK(na == nb && memcmp(before, after, na) == 0);
	CHECK(a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
	      a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_size == b.st_size);
	char side[400];
	snprintf(side, sizeof side, "%s-journal", p);
	CHECK_NE(access(side, F_OK), 0);
	cleanup_dir();
}

TEST(file_name_convention)
{
	struct nsys_name n;
	nsys_name_parse("node_a_prefill_w12_e3_profile_rank5.sqlite", &n);
	CHECK(n.mapped && !strcmp(n.host, "node_a") && !strcmp(n.worker, "prefill-12"));
	CHECK(n.has_engine && n.engine == 3 && n.has_rank && n.rank == 5);
	nsys_name_parse("h_decode_w0.sqlite", &n);
	CHECK(n.mapped && !n.has_rank && !n.has_engine && !n.gpus[0]);
	nsys_name_parse("h_frontend_2.sqlite", &n);
	CHECK(n.mapped && !strcmp(n.worker, "frontend") && !strcmp(n.host, "h"));
	nsys_name_parse("h_decode_w0_extra.sqlite", &n);
	CHECK(!n.mapped && !strcmp(n.worker, "unmapped"));
	nsys_name_parse("decode_w0.sqlite", &n);
	CHECK(!n.mapped);
	nsys_name_parse("h_decode_w0.db", &n);
	CHECK(!n.mapped);
	nsys_name_parse("h_worker_w0.sqlite", &n);
	CHECK(!n.mapped);
}

TEST(dict)
{
	struct strdict d;
	strdict_init(&d);
	char k[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "k%d", i);
		CHECK_EQ(strdict_intern(&d, k, strlen(k), NULL), i);
	}
	int added = 1;
	CHECK(strdict_intern(&d, "k42", 3, &added) == 42 && !added);
	CHECK(strdict_intern(&d, "", 0, &added) == 5000 && added);
	/* a CPU sample with no frames interns an empty key with no buffer */
	CHECK(strdict_intern(&d, NULL, 0, &added) == 5000 && !added);
	strdict_free(&d);
}

TEST(hostile_exports)
{
	setup_dir();
	struct coll c;
	struct err e;
	int rc;
	/* A text start is an error naming the file and the row. */
	const char *p = make_export("t.sqlite",
		"INSERT INTO NVTX_EVENTS (rowid,start,end,eventType,text) VALUES"
		" (4, 'abc', 5, 59, 'x');");
	json_t *doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && doc == NULL);
	CHECK(strstr(e.msg, "t.sqlite: NVTX_EVENTS row 4") != NULL);
	/* Invalid UTF-8 in names becomes U+FFFD; the document stays valid. */
	p = make_export("u.sqlite",
		"INSERT INTO NVTX_EVENTS (start,end,eventType,text) VALUES"
		" (1, 5, 59, CAST(X'61FF62' AS TEXT));");
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK_EQ(rc, 0);
	char *s = json_dumps(JGET(json_array_get(JGET(doc, "profiles"), 0),
	                          "names"), JSON_COMPACT);
	CHECK_STR(s, "[\"a\xEF\xBF\xBD" "b\"]");
	free(s);
	json_decref(doc);
	/* No session start row: skipped with a warning. */
	make_export("d/empty.sqlite", "DELETE FROM TARGET_INFO_SESSION_START_TIME;");
	make_export("d/ok.sqlite", "INSERT INTO NVTX_EVENTS (start,end,eventType,"
	            "text) VALUES (1, 5, 59, 'x');");
	char d[300];
	snprintf(d, sizeof d, "%s/d", dir);
	p = d;
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == 0 && json_array_size(JGET(doc, "profiles")) == 1);
	const char *w = json_string_value(json_array_get(
		JGET(JGET(doc, "meta"), "warnings"), 0));
	CHECK(w && strstr(w, "empty.sqlite") && strstr(w, "utcEpochNs"));
	json_decref(doc);
	/* Clock values that overflow 64-bit nanoseconds: an error. */
	p = make_export("o.sqlite", "UPDATE TARGET_INFO_SESSION_START_TIME SET "
	                "utcEpochNs = 9223372036854775000;"
	                "UPDATE ANALYSIS_DETAILS SET stopTime = stopTime + 1000000000000;");
	doc = run(&p, 1, NULL, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && strstr(e.msg, "o.sqlite") &&
	      strstr(e.msg, "out of the 64-bit"));
	/* An origin far from the export: the difference must not overflow. */
	p = make_export("f.sqlite", "INSERT INTO NVTX_EVENTS (start,end,eventType,"
	                "text) VALUES (1, 5, 59, 'x');");
	doc = json_pack("{s:s,s:{s:s,s:f},s:[],s:[],s:[]}", "schema",
	                "srtctl-trace/1", "meta", "origin_ns",
	                "-9223372036854775000", "duration", 1.0, "sources",
	                "workers", "profiles");
	doc = run(&p, 1, doc, -1, &c, &rc, &e);
	CHECK(rc == ERR_DATA && strstr(e.msg, "f.sqlite"));
	json_decref(doc);
	cleanup_dir();
}

int main(void)
{
	RUN(ranges_selection_order_and_clock);
	RUN(cap_at_n_and_n_plus_one);
	RUN(nsight_only_document);
	RUN(cpu_samples_stacks);
	RUN(errors_and_warnings);
	RUN(export_unchanged);
	RUN(file_name_convention);
	RUN(dict);
	RUN(hostile_exports);
	return testlib_done();
}
