/*
 * test_query: the query engine's edge cases, with expected values worked
 * out by hand from the fixture (or from the tiny documents written here),
 * checked on both backends (querylib.h).
 */
#include "querylib.h"

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
	       "\"tid\":111,\"depth\":0,\"definition\":{\"backend\":\"trtllm\",\"scope\":"
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
	       "\"depth\":0,\"definition\":null");
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
	fail2(&pr, &p, ERR_USAGE, "request requires a request id (--request ID)");
	close_pair(&pr);
}

/* ---- validation ---- */

TEST(validation_messages_in_order)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p;
	const char *range = "Require 0 <= start < end <= 12.0 (run duration "
	                    "in seconds from origin_ns)";
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
	      "request, lifecycle, metrics, profiles, nsys, gpu, cpu, iterations, "
	      "sources, server_spans, sessions, workers, families, timeline, sql");
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
	BAD("{\"worker\":3}",
	    "worker must be a string, a list of strings or null");
	BAD("{\"request_id\":3}", "request_id must be a string or null");
	BAD("{\"points\":1}", "points must be a boolean or null");
#undef BAD
	j = json_loads("{\"kind\":\"nsys\",\"start\":1,\"end\":2.5,\"rank\":0,"
	               "\"profile\":null,\"limit\":0,\"points\":true,"
	               "\"other\":[1]}",
	               0, NULL);
	CHECK_EQ(query_params_from_json(j, &p, &e), 0);
	CHECK_STR(p.kind, "nsys");
	CHECK(p.has_start && p.start == 1.0 && p.has_end && p.end == 2.5);
	CHECK(p.has_rank && p.rank == 0 && !p.has_profile);
	CHECK(p.limit == 0 && p.points == 1 && p.offset == 0);
	json_decref(j);
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
	return querylib_done();
}
