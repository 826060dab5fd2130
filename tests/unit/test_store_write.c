/* Unit tests: store_write (buckets, generation ids, rows through the sink,
 * durations, schema) and sink_tee. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/jsonout.h"
#include "ingest/sink_tee.h"
#include "store/store_write.h"
#include "testlib.h"

TEST(bucket_formula)
{
	CHECK_EQ(row_bucket(1.0, 1.0), -29);
	CHECK_EQ(row_bucket(2.0, 1.0), -29);
	CHECK_EQ(row_bucket(0.0, 1e-9), -29);
	CHECK_EQ(row_bucket(0.0, 1.0), 0);
	CHECK_EQ(row_bucket(0.0, 0.5), -1);
	CHECK_EQ(row_bucket(0.0, 0.75), 0);
	CHECK_EQ(row_bucket(0.0, 3.0), 2);
	CHECK_EQ(row_bucket(-1.0, 12.0), 4);
	CHECK_EQ(row_bucket(-1e308, 1e308), 1025);
}

TEST(generation_is_random_hex)
{
	char a[STORE_GENERATION_LEN + 1], b[STORE_GENERATION_LEN + 1];
	struct err e;

	CHECK_EQ(store_generation_new(a, &e), 0);
	CHECK_EQ(store_generation_new(b, &e), 0);
	CHECK_EQ(strlen(a), 32);
	CHECK_EQ(strspn(a, "0123456789abcdef"), 32);
	CHECK_NE(strcmp(a, b), 0);
}

static int count_rows(void *ctx, int64_t p, int64_t o,
                      const struct row_event *row, struct err *e)
{
	(void)p;
	(void)o;
	(void)row;
	(void)e;
	(*(int *)ctx)++;
	return 0;
}

static char *query_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *out = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		out = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

TEST(rows_through_a_tee)
{
	char dir[] = "/tmp/dsight-unit-XXXXXX", path[256];
	struct store_writer *w;
	struct row_sink store, counter, tee;
	struct sink_tee t;
	struct err e;
	int seen = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.sqlite", dir);
	CHECK_EQ(store_write_open(path, &w, &e), 0);
	store_write_sink(w, &store);
	memset(&counter, 0, sizeof counter);
	counter.ctx = &seen;
	counter.event = count_rows;
	sink_tee_init(&t);
	sink_tee_add(&t, &store);
	sink_tee_add(&t, &counter);
	sink_tee_sink(&t, &tee);

	/* 100000 events: several batches through the writer thread */
	for (int i = 0; i < 100000; i++) {
		struct row_event ev = {i * 0.125, i * 0.125 + (i % 7) * 0.25,
		                            i % 3, "42", 2, i};
		CHECK_EQ(tee.event(tee.ctx, i % 2, i / 2, &ev, &e), 0);
	}
	struct row_sample sa = {1.5, "None", 4, 3, 9};
	CHECK_EQ(tee.sample(tee.ctx, 0, 0, &sa, &e), 0);
	struct row_point pt = {2.0, {NUM_BIG, 0, 0, "-123456789012345678901234", 25}, 1, 7, NULL, 0, 0, 0};
	CHECK_EQ(tee.point(tee.ctx, 3, 0, &pt, &e), 0);
	struct row_point pn = {-1.0, {NUM_NULL, 0, 0, NULL, 0}, 1, 8, NULL, 0, 0, 0};
	CHECK_EQ(tee.point(tee.ctx, 3, 1, &pn, &e), 0);
	CHECK_EQ(seen, 100000);

	json_t *cat = json_pack("{s:s,s:[]}", "schema", "srtctl-trace/1", "profiles");
	CHECK_EQ(store_write_finish(w, cat, "0123456789abcdef0123456789abcdef", &e), 0);
	struct store_write_stats st;
	store_write_get_stats(w, &st);
	CHECK(st.events == 100000 && st.samples == 1 && st.points == 2);

	/* the name index builds on its own thread; meanwhile another
	 * connection reads the finished tables (the build's web phase) */
	sqlite3 *db;
	char uri[300], side[300];
	char *s;
	snprintf(uri, sizeof uri, "file:%s?mode=ro", path);
	CHECK_EQ(store_write_index_begin(w, &e), 0);
	CHECK_EQ(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
	CHECK_STR(s = query_text(db, "SELECT count(*) FROM events"), "100000");
	free(s);
	sqlite3_close(db);
	CHECK_EQ(store_write_settle(w, 0, &e), 0);
	store_write_close(w);
	json_decref(cat);
	snprintf(side, sizeof side, "%s-wal", path);
	CHECK(access(side, F_OK) != 0);
	snprintf(side, sizeof side, "%s-shm", path);
	CHECK(access(side, F_OK) != 0);

	CHECK_EQ(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
	CHECK_STR(s = query_text(db, "SELECT stat FROM sqlite_stat1 WHERE idx = 'dsight_events_name'"),
	          "100000 100000 100000 1 1"); /* no profiles or names: 1 each */
	free(s);
	CHECK_STR(s = query_text(db, "SELECT count(*) FROM events"), "100000");
	free(s);
	CHECK_STR(s = query_text(db, "SELECT payload FROM samples"), "[1.5,\"None\",3,9]");
	free(s);
	CHECK_STR(s = query_text(db, "SELECT payload FROM points WHERE ordinal = 0"),
	          "[2.0,-123456789012345678901234,1,7]");
	free(s);
	CHECK_STR(s = query_text(db, "SELECT payload FROM points WHERE ordinal = 1"),
	          "[-1.0,null,1,8]");
	free(s);
	CHECK_STR(s = query_text(db, "SELECT json FROM catalog"),
	          "{\"schema\":\"srtctl-trace/1\",\"profiles\":[]}");
	free(s);
	CHECK_STR(s = query_text(db, "PRAGMA user_version"), "1");
	free(s);
	CHECK_STR(s = query_text(db, "PRAGMA journal_mode"), "delete");
	free(s);
	/* durations: the maximum per (profile, bucket) */
	CHECK_STR(s = query_text(db, "SELECT group_concat(profile || ':' || bucket || ':' || maximum, ' ')"
	                             " FROM durations"),
	          "0:-29:0.0 0:-2:0.25 0:-1:0.5 0:0:1.0 0:1:1.5 1:-29:0.0 1:-2:0.25 1:-1:0.5 1:0:1.0 1:1:1.5");
	free(s);
	/* every event's bucket is ceil(log2(max(end - start, 1e-9))), computed
	 * here independently of row_bucket */
	{
		sqlite3_stmt *st_;
		long rows = 0, wrong = 0;
		CHECK_EQ(sqlite3_prepare_v2(db, "SELECT start, end, bucket FROM events", -1, &st_, NULL), SQLITE_OK);
		while (sqlite3_step(st_) == SQLITE_ROW) {
			double d = sqlite3_column_double(st_, 1) - sqlite3_column_double(st_, 0);
			long want = (long)ceil(log2(d > 1e-9 ? d : 1e-9));
			if (sqlite3_column_int64(st_, 2) != want) {
				if (!wrong)
					fprintf(stderr, "  row %ld: bucket %lld, want %ld\n", rows,
					        (long long)sqlite3_column_int64(st_, 2), want);
				wrong++;
			}
			rows++;
		}
		sqlite3_finalize(st_);
		CHECK_EQ(rows, 100000);
		CHECK_EQ(wrong, 0);
	}
	/* the contract's three indexes (dsight's own are named dsight_*) */
	CHECK_STR(s = query_text(db, "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master"
	                             " WHERE type = 'index' AND name NOT LIKE 'dsight%' ORDER BY name)"),
	          "event_window,point_window,sample_window");
	free(s);
	sqlite3_close(db);
	unlink(path);
	rmdir(dir);
}

/*
 * Loads 3 profiles of ranges (nested, overlapping, identical, two tids and
 * the empty one, some NaN ends) in profile order, or interleaved when
 * interleave is set, and checks every range's nvtx depth against the
 * definition counted by SQL: the ranges of its profile and tid that
 * contain it, an identical one only when it is earlier.  Sorted (each
 * profile's ranges in containment order, as the trace format stores
 * them), the depths are counted as the rows stream in; otherwise from the
 * loaded table.
 */
static int cmp_event(const void *a, const void *b)
{
	const struct row_event *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* NaN ends: anywhere, no depth */
	return 0;
}

static void check_depths(int interleave, int sorted, const char *want)
{
	static struct row_event evs[3][700];
	size_t nev[3] = {0, 0, 0};
	char dir[] = "/tmp/dsight-unit-XXXXXX", path[256], uri[300];
	static const char *const tids[3] = {"7", "8", ""};
	struct store_writer *w;
	struct row_sink sink;
	struct err e;
	unsigned x = 12345;
	sqlite3 *db;
	char *s;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.sqlite", dir);
	CHECK_EQ(store_write_open(path, &w, &e), 0);
	store_write_sink(w, &sink);
	for (int i = 0; i < 1800; i++) {
		int p = interleave ? i % 3 : i / 600, k = interleave ? i / 3 : i % 600;
		x = x * 1103515245u + 12345u;
		/* some before 0, and ends of -0 and +0: the depths rank the
		 * ends by their bits (store_depth.c end_key) */
		double start = ((double)(x >> 8 & 255) - 32.0) / 4.0;
		double len = (double)(x >> 16 & 63) / 2.0;
		if (k % 50 == 7)
			len = NAN;
		if (k % 60 == 11)
			start = -1.0, len = k % 120 == 11 ? 1.0 : 0.0;
		struct row_event ev = {start, k % 60 == 11 && len == 0.0 ? -0.0 : start + len, 0, tids[x >> 28 & 1 ? 2 : x >> 29 & 1],
		                       0, k};
		ev.tid_len = strlen(ev.tid);
		if (sorted) {
			evs[p][nev[p]++] = ev;
			if (k % 40 == 3)
				evs[p][nev[p]++] = ev;
			continue;
		}
		CHECK_EQ(sink.event(sink.ctx, p, k, &ev, &e), 0);
		if (k % 40 == 3) /* an identical range right after */
			CHECK_EQ(sink.event(sink.ctx, p, k + 100000, &ev, &e), 0);
	}
	for (int p = 0; sorted && p < 3; p++) {
		qsort(evs[p], nev[p], sizeof evs[p][0], cmp_event);
		for (size_t k = 0; k < nev[p]; k++)
			CHECK_EQ(sink.event(sink.ctx, p, (int64_t)k, &evs[p][k], &e), 0);
	}
	json_t *cat = json_pack("{s:s,s:[]}", "schema", "srtctl-trace/1", "profiles");
	CHECK_EQ(store_write_finish(w, cat, "0123456789abcdef0123456789abcdef", &e), 0);
	store_write_close(w);
	json_decref(cat);

	snprintf(uri, sizeof uri, "file:%s?mode=ro", path);
	CHECK_EQ(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
	CHECK_STR(s = query_text(db,
	          "SELECT count(*) || ' ' || sum(d.depth > 0) || ' ' || sum(d.depth IS NOT"
	          " coalesce((SELECT v.depth FROM dsight_view_depth v WHERE v.profile ="
	          " d.profile AND v.ordinal = d.ordinal), 0)) FROM (SELECT e.profile,"
	          " e.ordinal, (SELECT count(*) FROM events a WHERE a.profile = e.profile"
	          " AND a.tid IS e.tid AND a.\"end\" IS NOT NULL AND a.start <= e.start"
	          " AND a.\"end\" >= e.\"end\" AND NOT (a.start = e.start AND a.\"end\" ="
	          " e.\"end\" AND a.ordinal >= e.ordinal)) AS depth FROM events e"
	          " WHERE e.\"end\" IS NOT NULL) d"),
	          want); /* rows, nested, wrong */
	free(s);
	/* no depth for a range without an end */
	CHECK_STR(s = query_text(db, "SELECT count(*) FROM dsight_view_depth v JOIN events e"
	                             " USING (profile, ordinal) WHERE e.\"end\" IS NULL"), "0");
	free(s);
	sqlite3_close(db);
	unlink(path);
	rmdir(dir);
}

TEST(depths_as_rows_stream)
{
	check_depths(0, 1, "1809 1593 0");
}

TEST(depths_of_ranges_out_of_order)
{
	check_depths(0, 0, "1809 1593 0");
}

TEST(depths_of_interleaved_profiles)
{
	check_depths(1, 0, "1809 1582 0");
}

int main(void)
{
	RUN(bucket_formula);
	RUN(generation_is_random_hex);
	RUN(rows_through_a_tee);
	RUN(depths_as_rows_stream);
	RUN(depths_of_ranges_out_of_order);
	RUN(depths_of_interleaved_profiles);
	return testlib_done();
}
