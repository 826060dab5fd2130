/* Unit tests of common/evidence (reader, validation, catalog, capabilities). */
#include "testlib.h"

#include <jansson.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/buf.h"
#include "ingest/capabilities.h"
#include "ingest/evidence.h"
#include "base/jsonout.h"
#include "base/num.h"

#define FIXTURE "tests/fixtures/example.trace.json"

/* ---- helpers --------------------------------------------------------- */

/* Records every row as one text line ("E p k start end name tid row"). */
struct rec {
	struct buf log;
	uint64_t events, samples, points;
	int fail_at; /* abort the read at this many rows (0 = never) */
	int progress_calls;
	uint64_t last_done, last_total;
};

static void real_text(struct buf *b, double d)
{
	jsonout_real(b, d);
}

static int rec_abort(struct rec *r, struct err *e)
{
	if (r->fail_at < 0 && r->events + r->samples + r->points >= (uint64_t)-r->fail_at)
		return ERR_LIMIT; /* a sink that forgets the message */
	if (r->fail_at > 0 && r->events + r->samples + r->points >= (uint64_t)r->fail_at)
		return err_set(e, ERR_DATA, "sink says stop");
	return 0;
}

static int rec_event(void *ctx, int64_t p, int64_t k, const struct row_event *ev,
                     struct err *e)
{
	struct rec *r = ctx;
	buf_printf(&r->log, "E %lld %lld ", (long long)p, (long long)k);
	real_text(&r->log, ev->start);
	buf_putc(&r->log, ' ');
	real_text(&r->log, ev->end);
	buf_printf(&r->log, " %lld %.*s %lld\n", (long long)ev->name, (int)ev->tid_len,
	           ev->tid, (long long)ev->source_row);
	r->events++;
	return rec_abort(r, e);
}

static int rec_sample(void *ctx, int64_t p, int64_t k, const struct row_sample *s,
                      struct err *e)
{
	struct rec *r = ctx;
	buf_printf(&r->log, "S %lld %lld ", (long long)p, (long long)k);
	real_text(&r->log, s->time);
	buf_printf(&r->log, " %.*s %lld %lld\n", (int)s->tid_len, s->tid,
	           (long long)s->stack, (long long)s->source_row);
	r->samples++;
	return rec_abort(r, e);
}

static int rec_point(void *ctx, int64_t s, int64_t k, const struct row_point *pt,
                     struct err *e)
{
	struct rec *r = ctx;
	static const char kinds[] = "nibr";
	buf_printf(&r->log, "P %lld %lld ", (long long)s, (long long)k);
	real_text(&r->log, pt->time);
	buf_printf(&r->log, " %c:", kinds[pt->value.kind]);
	num_emit(&r->log, &pt->value);
	buf_printf(&r->log, " %lld %lld\n", (long long)pt->source_id,
	           (long long)pt->source_row);
	r->points++;
	return rec_abort(r, e);
}

static void rec_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct rec *r = ctx;
	r->progress_calls++;
	r->last_done = done;
	r->last_total = total;
}

static struct row_sink rec_sink(struct rec *r)
{
	struct row_sink s = { r, rec_event, rec_sample, rec_point, rec_progress, NULL, NULL, NULL };
	memset(r, 0, sizeof *r);
	buf_init(&r->log, 0);
	return s;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char tmp[65536];
	size_t n;

	buf_init(&b, 0);
	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_append(&b, tmp, n);
	fclose(f);
	return buf_detach(&b, len);
}

static char *temp_file(const void *data, size_t n)
{
	char *path = strdup("/tmp/dsight-test-evidence-XXXXXX");
	int fd = mkstemp(path);
	CHECK_GE(fd, 0);
	CHECK_EQ(write(fd, data, n), (ssize_t)n);
	close(fd);
	return path;
}

/* gzip of data as `members` concatenated members. */
static char *gzip_file(const char *data, size_t n, int members, const char *path_opt)
{
	char *path = path_opt ? strdup(path_opt) : temp_file("", 0);
	gzFile g;
	size_t step = n / (size_t)members + 1, off = 0;

	for (int m = 0; m < members; m++) {
		g = gzopen(path, m == 0 ? "wb" : "ab");
		CHECK(g != NULL);
		size_t k = off + step > n ? n - off : step;
		if (k)
			CHECK_EQ(gzwrite(g, data + off, (unsigned)k), (int)k);
		off += k;
		gzclose(g);
	}
	return path;
}

static char *catalog_text(const json_t *cat)
{
	struct buf b;
	buf_init(&b, 0);
	jsonout_tree(&b, cat, 0);
	return buf_detach(&b, NULL);
}

/* Reads a document from text; returns the error code and fills e. */
static int read_text(const char *text, size_t n, struct err *e)
{
	char *path = temp_file(text, n);
	json_t *cat = NULL;
	struct evstats st;
	err_clear(e);
	int rc = evidence_read(path, NULL, &cat, &st, e);
	if (!rc) {
		json_decref(cat);
		evstats_free(&st);
	} else {
		CHECK(cat == NULL);
		CHECK_NE(e->msg[0], '\0');
		CHECK(strchr(e->msg, '\n') == NULL);
	}
	unlink(path);
	free(path);
	return rc;
}

static void expect_error(const char *text, const char *want)
{
	struct err e;
	int rc = read_text(text, strlen(text), &e);
	if (rc != ERR_DATA || !strstr(e.msg, want)) {
		fprintf(stderr, "  document: %.200s\n  wanted error containing: %s\n  got (%d): %s\n",
		        text, want, rc, e.msg);
		testlib_failed_checks++;
	}
}

static void expect_ok(const char *text)
{
	struct err e;
	int rc = read_text(text, strlen(text), &e);
	if (rc) {
		fprintf(stderr, "  document: %.200s\n  unexpected error: %s\n", text, e.msg);
		testlib_failed_checks++;
	}
}

/* The expected catalog: the fixture parsed by jansson (the two giant point
 * values blanked, which only sit in arrays the catalog empties), with the
 * big arrays emptied and counts appended. */
static json_t *expected_catalog(void)
{
	size_t n;
	char *text = slurp(FIXTURE, &n);
	const char *bigs[] = { "18446744073709551615", "100000000000000000000" };
	for (size_t b = 0; b < 2; b++) {
		char *at = strstr(text, bigs[b]);
		CHECK(at != NULL);
		if (at)
			memset(at, ' ', strlen(bigs[b])), at[0] = '0';
	}
	json_error_t je;
	json_t *doc = json_loadb(text, n, 0, &je), *v, *cpu;
	free(text);
	CHECK(doc != NULL);
	size_t i;
	json_array_foreach(json_object_get(doc, "profiles"), i, v) {
		size_t ne = json_array_size(json_object_get(v, "events"));
		json_object_set_new(v, "events", json_array());
		json_object_set_new(v, "event_count", json_integer((json_int_t)ne));
		cpu = json_object_get(v, "cpu");
		if (json_is_object(cpu)) {
			size_t ns = json_array_size(json_object_get(cpu, "samples"));
			json_object_set_new(cpu, "samples", json_array());
			json_object_set_new(cpu, "sample_count", json_integer((json_int_t)ns));
		}
	}
	json_array_foreach(json_object_get(doc, "metrics"), i, v)
		json_object_set_new(v, "points", json_array());
	return doc;
}

/* ---- the fixture --------------------------------------------------------- */

TEST(fixture_rows)
{
	struct rec r;
	struct row_sink sink = rec_sink(&r);
	struct evstats st;
	json_t *cat = NULL;
	struct err e;

	CHECK_EQ(evidence_read(FIXTURE, &sink, &cat, &st, &e), 0);
	CHECK(r.events == 10 && r.samples == 5 && r.points == 23);
	CHECK(st.events == 10 && st.samples == 5 && st.points == 23);
	CHECK(st.nprofiles == 2 && st.profile_events[0] == 8 && st.profile_events[1] == 2);
	CHECK(st.profile_samples[0] == 0 && st.profile_samples[1] == 5);
	CHECK(st.nseries == 5 && st.series_points[0] == 6 && st.series_points[1] == 4 &&
	      st.series_points[2] == 6 && st.series_points[3] == 4 && st.series_points[4] == 3);
	CHECK_GT(st.input_bytes, 20000);
	CHECK(r.progress_calls >= 1 && r.last_done == st.input_bytes &&
	      r.last_total == st.input_bytes);
	const char *log = r.log.data;
	/* the long root range before 0, a zero-length range, non-"None" tids */
	CHECK(strstr(log, "E 0 0 -1.0 12.0 0 1694498927 3\n"));
	CHECK(strstr(log, "E 0 1 0.25 0.25 1 1694498927 4\n"));
	CHECK(strstr(log, "E 0 4 2.1 2.1000000001 1 1694498928 7\n"));
	CHECK(strstr(log, "E 1 1 8.0 8.2 1 None 2\n"));
	CHECK(strstr(log, "S 1 3 3.0 117440513 2 103\n"));
	/* integer values stay integers, reals reals, big ones exact */
	CHECK(strstr(log, "P 0 0 0.5 i:1 3 0\n"));
	CHECK(strstr(log, "P 0 4 9.0 n:null 3 4\n"));
	CHECK(strstr(log, "P 2 0 0.0 r:0.0 3 10\n"));
	CHECK(strstr(log, "P 2 3 3.0 b:18446744073709551615 3 13\n"));
	CHECK(strstr(log, "P 2 4 4.0 b:100000000000000000000 3 15\n"));
	CHECK(strstr(log, "P 1 0 -1.5 i:8 2 1\n"));
	/* document order */
	CHECK(strstr(log, "E 0 7 ") < strstr(log, "E 1 0 "));
	json_decref(cat);
	evstats_free(&st);
	buf_free(&r.log);
}

TEST(fixture_catalog)
{
	json_t *cat = NULL, *want = expected_catalog();
	struct err e;

	CHECK_EQ(evidence_read(FIXTURE, NULL, &cat, NULL, &e), 0);
	char *got = catalog_text(cat), *exp = catalog_text(want);
	CHECK_STR(got, exp); /* same values, kinds and key order */
	json_t *p0 = json_array_get(json_object_get(cat, "profiles"), 0);
	CHECK_EQ(json_array_size(json_object_get(p0, "events")), 0);
	CHECK_EQ(json_integer_value(json_object_get(p0, "event_count")), 8);
	/* event_count is the last key of the profile */
	const char *last = NULL, *k;
	json_t *v;
	json_object_foreach(p0, k, v)
		last = k;
	CHECK_STR(last, "event_count");
	json_t *cpu = json_object_get(json_array_get(json_object_get(cat, "profiles"), 1), "cpu");
	CHECK_EQ(json_integer_value(json_object_get(cpu, "sample_count")), 5);
	json_t *s0 = json_array_get(json_object_get(cat, "metrics"), 0);
	CHECK(json_is_array(json_object_get(s0, "points")) &&
	      json_array_size(json_object_get(s0, "points")) == 0);
	CHECK(json_object_get(s0, "point_count") == NULL);
	/* computed capabilities equal the stored ones */
	struct evstats st;
	json_t *again = NULL;
	CHECK_EQ(evidence_read(FIXTURE, NULL, &again, &st, &e), 0);
	json_t *caps = capabilities_compute(cat, st.series_points, st.nseries);
	CHECK(json_equal(caps, json_object_get(cat, "capabilities")));
	char *ct = catalog_text(caps);
	CHECK_STR(ct, "{\"requests\":true,\"request_breakdown\":true,\"server_activity\":true,"
	              "\"metrics\":true,\"worker_metrics\":true,\"hardware_metrics\":true,"
	              "\"nvtx\":true,\"cpu_samples\":true,\"nsight\":true,\"iterations\":true}");
	free(ct);
	json_decref(caps);
	json_decref(again);
	evstats_free(&st);
	free(got);
	free(exp);
	json_decref(cat);
	json_decref(want);
}

TEST(capabilities_computed_when_missing)
{
	size_t n;
	char *text = slurp(FIXTURE, &n);
	json_t *cat = NULL, *ref = NULL;
	struct err e;
	/* drop the stored capabilities: `"capabilities": {...}` is last */
	char *at = strstr(text, "\"capabilities\"");
	CHECK(at != NULL);
	char *comma = at;
	while (comma > text && *comma != ',')
		comma--;
	strcpy(comma, "\n}\n");
	char *path = temp_file(text, strlen(text));
	CHECK_EQ(evidence_read(path, NULL, &cat, NULL, &e), 0);
	CHECK_EQ(evidence_read(FIXTURE, NULL, &ref, NULL, &e), 0);
	char *a = catalog_text(cat), *b = catalog_text(ref);
	CHECK_STR(a, b);
	free(a);
	free(b);
	json_decref(cat);
	json_decref(ref);

	/* an empty run: everything false */
	const char *empty = "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":3},"
	                    "\"requests\":[],\"metrics\":[{\"id\":0,\"component\":\"GPU\","
	                    "\"points\":[]}],\"profiles\":[{\"id\":0,\"names\":[],\"events\":[],"
	                    "\"cpu\":null}]}";
	char *p2 = temp_file(empty, strlen(empty));
	CHECK_EQ(evidence_read(p2, NULL, &cat, NULL, &e), 0);
	char *ct = catalog_text(json_object_get(cat, "capabilities"));
	CHECK_STR(ct, "{\"requests\":false,\"request_breakdown\":false,\"server_activity\":false,"
	              "\"metrics\":false,\"worker_metrics\":false,\"hardware_metrics\":false,"
	              "\"nvtx\":false,\"cpu_samples\":false,\"nsight\":false,\"iterations\":false}");
	free(ct);
	/* meta.duration stays an integer */
	CHECK(json_is_integer(json_object_get(json_object_get(cat, "meta"), "duration")));
	json_decref(cat);
	unlink(path);
	unlink(p2);
	free(path);
	free(p2);
	free(text);
}

/* Reads path and compares rows and catalog with the plain fixture. */
static void same_as_fixture(const char *path)
{
	struct rec r1, r2;
	struct row_sink s1 = rec_sink(&r1), s2 = rec_sink(&r2);
	json_t *c1 = NULL, *c2 = NULL;
	struct err e;

	CHECK_EQ(evidence_read(FIXTURE, &s1, &c1, NULL, &e), 0);
	if (evidence_read(path, &s2, &c2, NULL, &e) != 0) {
		fprintf(stderr, "  %s\n", e.msg);
		testlib_failed_checks++;
		return;
	}
	CHECK_STR(r1.log.data, r2.log.data);
	char *a = catalog_text(c1), *b = catalog_text(c2);
	CHECK_STR(a, b);
	free(a);
	free(b);
	json_decref(c1);
	json_decref(c2);
	buf_free(&r1.log);
	buf_free(&r2.log);
}

TEST(gzip_same_as_plain)
{
	size_t n;
	char *text = slurp(FIXTURE, &n);
	char *gz = gzip_file(text, n, 1, NULL); /* no .gz name: detected by magic */
	same_as_fixture(gz);
	unlink(gz);
	free(gz);
	char *multi = gzip_file(text, n, 3, NULL);
	same_as_fixture(multi);
	/* zero padding after the last member is tolerated */
	FILE *f = fopen(multi, "ab");
	fwrite("\0\0\0\0", 1, 4, f);
	fclose(f);
	same_as_fixture(multi);
	unlink(multi);
	free(multi);
	free(text);
}

TEST(legacy_report_directory)
{
	char dir[] = "/tmp/dsight-test-legacy-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char data[256];
	snprintf(data, sizeof data, "%s/trace-data.json.gz", dir);
	char *d = evidence_data_file(dir);
	CHECK_STR(d, data);
	free(d);
	d = evidence_data_file(FIXTURE);
	CHECK_STR(d, FIXTURE);
	free(d);

	/* a directory without the data file */
	struct err e;
	json_t *cat = NULL;
	CHECK_EQ(evidence_read(dir, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "trace-data.json.gz") != NULL);

	size_t n;
	char *text = slurp(FIXTURE, &n);
	char *gz = gzip_file(text, n, 1, data);
	same_as_fixture(dir);
	unlink(gz);
	rmdir(dir);
	free(gz);
	free(text);
}

TEST(sink_abort_and_null_sink)
{
	struct rec r;
	struct row_sink sink = rec_sink(&r);
	json_t *cat = NULL;
	struct evstats st;
	struct err e;

	r.fail_at = 3;
	CHECK_EQ(evidence_read(FIXTURE, &sink, &cat, &st, &e), ERR_DATA);
	CHECK(strstr(e.msg, "sink says stop") != NULL);
	CHECK(cat == NULL && st.series_points == NULL && st.profile_events == NULL);
	buf_free(&r.log);

	sink = rec_sink(&r);
	r.fail_at = -12;
	CHECK_EQ(evidence_read(FIXTURE, &sink, &cat, &st, &e), ERR_LIMIT);
	CHECK(strstr(e.msg, "metrics[2].points[1]: the row was refused") != NULL);
	buf_free(&r.log);

	struct row_sink empty = { 0 };
	CHECK_EQ(evidence_read(FIXTURE, &empty, &cat, &st, &e), 0);
	CHECK_EQ(st.points, 23);
	json_decref(cat);
	evstats_free(&st);
}

/* ---- validation ------------------------------------------------------------ */

#define HEAD "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":10.0}"
#define DOC(rest) HEAD rest "}"
#define PROF(body) DOC(",\"profiles\":[{\"id\":0,\"names\":[\"a\",\"b\"]" body "}]")
#define SERIES(body) DOC(",\"metrics\":[{\"id\":0" body "}]")

TEST(gzip_abort_midway_and_big_input)
{
	/* > NSLOT chunks of inflated content, so the inflating thread is
	 * still busy (or blocked on a full ring) when the sink aborts */
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, HEAD ",\"profiles\":[{\"id\":0,\"names\":[\"a\"],\"events\":[");
	for (int i = 0; i < 3000; i++) {
		buf_printf(&b, "%s[%d.5,%d.75,0,\"7\",%d]", i ? "," : "", i, i, i);
		if (i % 500 == 0)
			for (int k = 0; k < 2000000; k++)
				buf_putc(&b, ' ');
	}
	buf_puts(&b, "]}]}");
	char *gz = gzip_file(b.data, b.len, 2, NULL);
	struct rec r;
	struct row_sink sink = rec_sink(&r);
	struct evstats st;
	json_t *cat = NULL;
	struct err e;
	r.fail_at = 2;
	CHECK_EQ(evidence_read(gz, &sink, &cat, &st, &e), ERR_DATA);
	CHECK(strstr(e.msg, "sink says stop") != NULL);
	buf_free(&r.log);
	sink = rec_sink(&r);
	CHECK_EQ(evidence_read(gz, &sink, &cat, &st, &e), 0);
	CHECK(r.events == 3000 && st.events == 3000);
	CHECK(strstr(r.log.data, "E 0 2999 2999.5 2999.75 0 7 2999\n") != NULL);
	struct stat sb;
	CHECK(stat(gz, &sb) == 0 && st.input_bytes == (uint64_t)sb.st_size);
	CHECK(r.progress_calls > 4 && r.last_done == st.input_bytes);
	json_decref(cat);
	evstats_free(&st);
	buf_free(&r.log);
	buf_free(&b);
	unlink(gz);
	free(gz);
}

TEST(rows_integer_times_become_reals)
{
	const char *doc = PROF(",\"events\":[[3,4,1,\"9\",0]],\"cpu\":{\"stacks\":[[0]],"
	                       "\"names\":[\"x\"],\"samples\":[[2,\"9\",0,1]]}");
	char *path = temp_file(doc, strlen(doc));
	struct rec r;
	struct row_sink sink = rec_sink(&r);
	json_t *cat = NULL;
	struct err e;
	CHECK_EQ(evidence_read(path, &sink, &cat, NULL, &e), 0);
	CHECK_STR(r.log.data, "E 0 0 3.0 4.0 1 9 0\nS 0 0 2.0 9 0 1\n");
	json_decref(cat);
	buf_free(&r.log);
	unlink(path);
	free(path);

	const char *pts = SERIES(",\"points\":[[1,-9223372036854775808,0,0],"
	                         "[2,-9223372036854775809,0,1],[3,1.50,0,2],[4,1E2,0,3]]");
	path = temp_file(pts, strlen(pts));
	sink = rec_sink(&r);
	CHECK_EQ(evidence_read(path, &sink, &cat, NULL, &e), 0);
	CHECK_STR(r.log.data, "P 0 0 1.0 i:-9223372036854775808 0 0\n"
	                      "P 0 1 2.0 b:-9223372036854775809 0 1\n"
	                      "P 0 2 3.0 r:1.5 0 2\nP 0 3 4.0 r:100.0 0 3\n");
	json_decref(cat);
	buf_free(&r.log);
	unlink(path);
	free(path);
}

TEST(valid_edge_documents)
{
	expect_ok(DOC(""));
	expect_ok(DOC(",\"unknown\":{\"x\":[1,2.5,null,true,\"\\u0000\"]}"));
	expect_ok(PROF(",\"events\":[],\"cpu\":null"));
	/* names after the rows */
	expect_ok(DOC(",\"profiles\":[{\"events\":[[0,1,1,\"1\",0]],\"names\":[\"a\",\"b\"],\"id\":0}]"));
	expect_ok(DOC(",\"audit\":{\"x\":-9223372036854775808,\"y\":9223372036854775807}"));
	expect_ok("\n\t " DOC("") "\n\n");
}

TEST(bad_top_level)
{
	expect_error("{\"schema\":\"srtctl-trace/2\",\"meta\":{\"duration\":1}}",
	             "schema: expected \"srtctl-trace/1\", got \"srtctl-trace/2\"");
	expect_error("{\"meta\":{\"duration\":1}}", "schema: missing");
	expect_error("{\"schema\":1}", "schema: expected \"srtctl-trace/1\"");
	expect_error("{\"schema\":\"srtctl-trace/1\"}", "meta: missing");
	expect_error("{\"schema\":\"srtctl-trace/1\",\"meta\":{}}", "meta.duration: missing");
	expect_error("{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":0}}",
	             "meta.duration: expected a finite number > 0");
	expect_error("{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":-1.5}}",
	             "meta.duration: expected a finite number > 0");
	expect_error("{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":\"5\"}}",
	             "meta.duration: expected a finite number > 0");
	expect_error("{\"schema\":\"srtctl-trace/1\",\"meta\":[]}", "meta: expected an object");
	expect_error("[1,2]", "top level is an array, not an object");
	expect_error("\"x\"", "top level is a string, not an object");
	expect_error(DOC(",\"profiles\":{}"), "profiles: expected an array");
	expect_error(DOC(",\"requests\":[1]"), "requests[0]: expected an object");
}

TEST(bad_ids)
{
	expect_error(DOC(",\"requests\":[{\"id\":\"r0\"},{\"id\":\"r1\"},{\"id\":\"r2\"},"
	                 "{\"id\":\"r1\"}]"),
	             "requests[3].id: duplicate request id 'r1'");
	expect_error(DOC(",\"requests\":[{\"id\":7}]"), "requests[0].id: expected a string");
	expect_error(DOC(",\"requests\":[{\"id\":\"a\",\"start\":\"1\"}]"),
	             "requests[0].start: expected a number");
	expect_error(DOC(",\"requests\":[{\"id\":\"a\",\"start\":1,\"first\":[]}]"),
	             "requests[0].first: expected a number or null");
	expect_ok(DOC(",\"requests\":[{\"id\":\"a\",\"start\":1,\"end\":2.5,\"first\":null}]"));
	expect_error(PROF(",\"events\":[]}, {\"id\":1,\"names\":[\"x\",3]"),
	             "profiles[1].names[1]: expected a string");
	expect_error(PROF(",\"cpu\":{\"names\":[null],\"stacks\":[],\"samples\":[]}"),
	             "profiles[0].cpu.names[0]: expected a string");
	expect_error(DOC(",\"requests\":[{\"start\":7}]"), "requests[0].id: expected a string");
	expect_error(DOC(",\"sources\":[{\"id\":0},{\"id\":2}]"),
	             "sources[1].id: wrong (must equal the array index 1)");
	expect_error(DOC(",\"metrics\":[{\"points\":[]}]"),
	             "metrics[0].id: missing (must equal the array index 0)");
	expect_error(DOC(",\"profiles\":[{\"id\":0},{\"id\":\"1\"}]"),
	             "profiles[1].id: wrong");
}

TEST(bad_rows)
{
	const char *ev = "expected [start, end, name_index, global_tid, source_row]";
	expect_error(PROF(",\"events\":[[0,1,0,\"1\",0],[0,1,0,\"1\"]]"),
	             "profiles[0].events[1]: expected [start, end, name_index, global_tid, source_row]");
	expect_error(PROF(",\"events\":[[0,1,0,\"1\",0,9]]"), ev);
	expect_error(PROF(",\"events\":[[\"0\",1,0,\"1\",0]]"), "profiles[0].events[0]: expected");
	expect_error(PROF(",\"events\":[[0,1,1.0,\"1\",0]]"), ev);
	expect_error(PROF(",\"events\":[[0,1,0,1,0]]"), ev);
	expect_error(PROF(",\"events\":[[0,null,0,\"1\",0]]"), ev);
	expect_error(PROF(",\"events\":[[0,1,0,\"1\",[0]]]"), ev);
	expect_error(PROF(",\"events\":[{}]"), "profiles[0].events[0]: expected [start");
	expect_error(PROF(",\"events\":[7]"), "profiles[0].events[0]: expected [start");
	expect_error(PROF(",\"events\":{}"), "profiles[0].events: expected an array");
	expect_error(PROF(",\"events\":[],\"events\":[]"), "profiles[0].events: duplicate key");
	expect_error(DOC(",\"profiles\":[],\"profiles\":[]"), "profiles: duplicate key");
	expect_error(DOC(",\"metrics\":[],\"metrics\":[]"), "metrics: duplicate key");
	expect_error(DOC(",\"meta\":{\"duration\":2}"), "meta: duplicate key");
	expect_error(PROF(",\"cpu\":{\"stacks\":[[0]],\"names\":[\"f\"],\"samples\":[[0,1,0,0]]}"),
	             "profiles[0].cpu.samples[0]: expected [time, global_tid, stack_index, source_row]");
	expect_error(PROF(",\"cpu\":5"), "profiles[0].cpu: expected an object or null");
	expect_error(SERIES(",\"points\":[[0,1,0,0],[1,2,0,0],[2,\"3\",0,0]]"),
	             "metrics[0].points[2]: expected [time, value, source_id, source_row]");
	expect_error(SERIES(",\"points\":[[0,1,0]]"), "metrics[0].points[0]: expected [time");
	expect_error(SERIES(",\"points\":[[null,1,0,0]]"), "metrics[0].points[0]: expected");
}

TEST(bad_dictionary_indexes)
{
	expect_error(PROF(",\"events\":[[0,1,1,\"1\",0],[0,1,5,\"1\",1]]"),
	             "profiles[0].events[1]: name_index 5 outside names (2 entries)");
	expect_error(PROF(",\"events\":[[0,1,-1,\"1\",0]]"),
	             "profiles[0].events[0]: name_index -1 outside names");
	/* names after the rows: the first offending row is named */
	expect_error(DOC(",\"profiles\":[{\"id\":0,\"events\":[[0,1,0,\"1\",0],[0,1,7,\"1\",1],"
	                 "[0,1,9,\"1\",2],[0,1,-1,\"1\",3]],\"names\":[\"a\",\"b\"]}]"),
	             "profiles[0].events[1]: name_index 7 outside names (2 entries)");
	expect_error(DOC(",\"profiles\":[{\"id\":0,\"events\":[[0,1,1,\"1\",0],[0,1,0,\"1\",1],"
	                 "[0,1,-3,\"1\",2],[0,1,2,\"1\",3]],\"names\":[\"a\",\"b\"]}]"),
	             "profiles[0].events[2]: name_index -3 outside names (2 entries)");
	expect_error(DOC(",\"profiles\":[{\"id\":0,\"events\":[[0,1,0,\"1\",0]]}]"),
	             "profiles[0].events[0]: name_index 0 outside names (0 entries)");
	expect_error(PROF(",\"cpu\":{\"samples\":[[0,\"1\",0,0],[0,\"1\",3,1]],\"stacks\":[[0]],"
	                  "\"names\":[\"f\"]}"),
	             "profiles[0].cpu.samples[1]: stack_index 3 outside stacks (1 entries)");
	expect_error(PROF(",\"cpu\":{\"stacks\":[[0,4]],\"names\":[\"f\"],\"samples\":[]}"),
	             "profiles[0].cpu.stacks[0][1]: name_index 4 outside names (1 entries)");
}

TEST(bad_numbers)
{
	expect_error(DOC(",\"audit\":{\"x\":9223372036854775808}"),
	             "audit.x: integer does not fit a signed 64-bit integer");
	expect_error(DOC(",\"iterations\":[{\"rank\":-9223372036854775809}]"),
	             "iterations[0].rank: integer does not fit");
	expect_error(PROF(",\"events\":[[0,1,0,\"1\",18446744073709551615]]"),
	             "profiles[0].events[0][4]: integer does not fit");
	expect_error(SERIES(",\"points\":[[0,1,99999999999999999999,0]]"),
	             "metrics[0].points[0][2]: integer does not fit");
	expect_error(DOC(",\"x\":1e999"), "x: number out of range");
	expect_error(SERIES(",\"points\":[[1e400,1,0,0]]"), "metrics[0].points[0][0]: number out of range");
	expect_error(DOC(",\"x\":NaN"), "NaN and Infinity are not allowed");
	expect_error(DOC(",\"x\":Infinity"), "NaN and Infinity are not allowed");
	expect_error(DOC(",\"x\":[-Infinity]"), "NaN and Infinity are not allowed");
}

TEST(bad_json)
{
	expect_error("{\"schema\": }", "invalid JSON at byte");
	expect_error(PROF(",\"events\":[[0,1,0,\"1\",0],[0,1,0,\"1\" x]]"),
	             "(at profiles[0].events[1][4])");
	expect_error(DOC(",\"x\":\"a\xff\xfe\""), "invalid UTF-8");
	expect_error(DOC(",\"x\":[\"ok\",\"a\\udc00\"]"), "x[1]: invalid UTF-8 (a lone surrogate");
	expect_error(DOC(",\"x\":{\"\\udfff\":1}"), "x.");
	expect_error(PROF(",\"events\":[[0,1,0,\"\\ude00\",0]]"),
	             "profiles[0].events[0][3]: invalid UTF-8");
	expect_ok(DOC(",\"x\":\"\\ud83d\\ude00 \xed\x9f\xbf \xed\x80\x80\""));
	/* RFC 3629 UTF-8 only, and no lone surrogate escape (yajl would turn
	 * "\ud800" into '?' and pair "\ud800\u0041" into U+10041) */
	expect_error(DOC(",\"x\":\"a\xc0\xaf\""), "x: invalid UTF-8 (an overlong form)");
	expect_error(DOC(",\"x\":[\"\xe0\x80\x80\"]"), "x[0]: invalid UTF-8 (an overlong form)");
	expect_error(DOC(",\"x\":{\"k\xed\xa0\x80\":1}"), "invalid UTF-8 (an encoded surrogate)");
	expect_error(DOC(",\"x\":\"\xf4\x90\x80\x80\""),
	             "x: invalid UTF-8 (a code point above U+10FFFF)");
	expect_error(DOC(",\"x\":[1,\"\\ud800\"]"), "x[1]: invalid UTF-8 (a lone surrogate \\u escape)");
	expect_error(DOC(",\"x\":\"\\ud800\\u0041\""), "x: invalid UTF-8 (a lone surrogate");
	expect_error(DOC(",\"x\":\"\\uD800z\""), "x: invalid UTF-8 (a lone surrogate");
	expect_error(PROF(",\"events\":[[0,1,0,\"\\ud800\",0]]"),
	             "profiles[0].events[0][3]: invalid UTF-8 (a lone surrogate");
	expect_error(PROF(",\"events\":[[0,1,0,\"\xc1\x80\",0]]"),
	             "profiles[0].events[0][3]: invalid UTF-8 (an overlong form)");
	expect_ok(DOC(",\"x\":\"a\\u0000b\\ud800\\udc00\\\\ud800\""));
	expect_error(DOC("") "x", "trailing garbage");
	expect_error(DOC("") "{}", "trailing garbage");
	expect_error(HEAD, "unexpected end of document");
	expect_error("", "empty document");
	expect_error("  \n ", "empty document");
	expect_error("hello world", "neither JSON nor gzip");
	expect_error("\x89PNG\r\n", "neither JSON nor gzip");
	expect_error("\xef\xbb\xbf" DOC(""), "byte order mark");
	expect_error("{\"schema\":\"srtctl-trace/1\",/*c*/\"meta\":{\"duration\":1}}",
	             "invalid JSON");
	/* deep nesting is refused, not recursed into */
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, HEAD ",\"x\":");
	for (int i = 0; i < 5000; i++)
		buf_putc(&b, '[');
	for (int i = 0; i < 5000; i++)
		buf_putc(&b, ']');
	buf_putc(&b, '}');
	expect_error(b.data, "nesting deeper than");
	buf_free(&b);
	/* a missing file */
	struct err e;
	json_t *cat = NULL;
	CHECK_EQ(evidence_read("/nonexistent/x.json", NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "/nonexistent/x.json") != NULL);
}

TEST(bad_gzip)
{
	size_t n;
	char *text = slurp(FIXTURE, &n);
	char *gz = gzip_file(text, n, 1, NULL);
	size_t gn;
	char *g = slurp(gz, &gn);
	struct err e;
	json_t *cat = NULL;

	/* truncated */
	char *t = temp_file(g, gn - 50);
	CHECK_EQ(evidence_read(t, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "truncated gzip data") != NULL);
	CHECK(strstr(e.msg, t) != NULL);
	unlink(t);
	free(t);
	/* header only */
	t = temp_file(g, 5);
	CHECK_EQ(evidence_read(t, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "truncated gzip data") != NULL);
	unlink(t);
	free(t);
	/* corrupt deflate data */
	for (size_t k = 40; k < 200; k++)
		g[k] = (char)(g[k] ^ 0x5a);
	t = temp_file(g, gn);
	CHECK_EQ(evidence_read(t, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "corrupt gzip data") != NULL);
	unlink(t);
	free(t);
	/* trailing garbage after the member */
	char *g2 = slurp(gz, &gn);
	char *big = malloc(gn + 3);
	memcpy(big, g2, gn);
	memcpy(big + gn, "xyz", 3);
	t = temp_file(big, gn + 3);
	CHECK_EQ(evidence_read(t, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "corrupt gzip data") != NULL);
	unlink(t);
	free(t);
	/* gzip of something that is not JSON */
	char *nj = gzip_file("PK\3\4 zip?", 10, 1, NULL);
	CHECK_EQ(evidence_read(nj, NULL, &cat, NULL, &e), ERR_DATA);
	CHECK(strstr(e.msg, "not an evidence document (a gzip file whose content is not JSON)") != NULL);
	unlink(nj);
	free(nj);
	free(big);
	free(g2);
	unlink(gz);
	free(gz);
	free(g);
	free(text);
}

int main(void)
{
	if (access(FIXTURE, R_OK) != 0 && chdir("../..") != 0)
		return 1;
	RUN(fixture_rows);
	RUN(fixture_catalog);
	RUN(capabilities_computed_when_missing);
	RUN(gzip_same_as_plain);
	RUN(legacy_report_directory);
	RUN(sink_abort_and_null_sink);
	RUN(gzip_abort_midway_and_big_input);
	RUN(rows_integer_times_become_reals);
	RUN(valid_edge_documents);
	RUN(bad_top_level);
	RUN(bad_ids);
	RUN(bad_rows);
	RUN(bad_dictionary_indexes);
	RUN(bad_numbers);
	RUN(bad_json);
	RUN(bad_gzip);
	return testlib_done();
}
