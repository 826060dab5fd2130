/*
 * test_query_analysis: sort, request joins, fields, several values per
 * filter, notes and the validation order of the analysis parameters, with
 * expected values worked out by hand from the fixture, on both backends
 * (querylib.h).
 */
#include "querylib.h"

/* The member key of each item, comma-separated (strings bare, numbers
 * as %g, null as "null"). */
static const char *column(const char *text, const char *key)
{
	static char out[1024];
	json_t *j = json_loads(text, 0, NULL);
	json_t *items = json_object_get(j, "items"), *v;
	size_t k, len = 0;
	out[0] = '\0';
	json_array_foreach(items, k, v) {
		const json_t *m = json_object_get(v, key);
		if (json_is_string(m))
			len += (size_t)snprintf(out + len, sizeof out - len,
			                        "%s%s", k ? "," : "",
			                        json_string_value(m));
		else if (json_is_number(m))
			len += (size_t)snprintf(out + len, sizeof out - len,
			                        "%s%g", k ? "," : "",
			                        json_number_value(m));
		else
			len += (size_t)snprintf(out + len, sizeof out - len,
			                        "%snull", k ? "," : "");
	}
	json_decref(j);
	return out;
}

static struct query_params kind_only(const char *kind)
{
	struct query_params p;
	query_params_init(&p);
	p.kind = kind;
	return p;
}

#define LIST(...) ((struct qlist){(const char *const[]){__VA_ARGS__}, \
	sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)})

TEST(sort_nulls_last_both_ways_and_ties_keep_default_order)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("requests");

	/* ttft 2000, 850.5, null, 120 */
	p.sort = LIST("ttft_ms");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-004,req-002,req-001,req-003");
	p.sort = LIST("-ttft_ms");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-001,req-002,req-004,req-003");
	/* completed twice: the tie keeps stored order in both directions */
	p.sort = LIST("status");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-004,req-001,req-002,req-003");
	p.sort = LIST("-status");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-003,req-001,req-002,req-004");
	/* durations 7.0, 5.75, 0.75, 1.5 */
	p.sort = LIST("duration");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-003,req-004,req-002,req-001");
	/* code point order: "sess-\u00dc" after "sess-B" (UTF-8 bytes agree) */
	p.sort = LIST("-session", "id");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-004,req-003,req-001,req-002");
	/* span counts 1, 0, 0, 0; then -id among the zeros */
	p.sort = LIST("-span_count", "-id");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-001,req-004,req-003,req-002");
	/* paging after sorting; total unchanged */
	p.sort = LIST("-ttft_ms");
	p.offset = 1;
	p.limit = 2;
	HAS(run2(&pr, &p), "{\"total\":4,");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-002,req-004");
	close_pair(&pr);
}

TEST(sort_sessions_iterations_nsys)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("sessions");

	p.sort = LIST("-requests", "-id"); /* 2, 1, 1 */
	CHECK_STR(column(run2(&pr, &p), "id"), "sess-A,sess-\xc3\x9c,sess-B");
	p = kind_only("iterations");
	p.sort = LIST("-start"); /* aligned rows start 3.0, 5.25, 10.0 */
	CHECK_STR(column(run2(&pr, &p), "start"), "10,5.25,3");
	p.sort = LIST("duration"); /* 1.0, 0.001, 1.0 */
	CHECK_STR(column(run2(&pr, &p), "start"), "5.25,3,10");
	p = kind_only("nsys");
	p.has_profile = 1;
	p.profile = 1;
	p.sort = LIST("-name");
	CHECK_STR(column(run2(&pr, &p), "name"),
	          "route.generate,preprocess.tokenize");
	close_pair(&pr);
}

TEST(join_windows_workers_and_response)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("iterations");
	const char *t;

	p.request_id = "req-001"; /* [0, 7], first 2.0, workers decode-0 */
	t = run2(&pr, &p);
	HAS(t, "\"range\":[0.0,7.0],\"request\":{\"id\":\"req-001\","
	       "\"phase\":\"whole\",\"window\":[0.0,7.0],\"workers\":"
	       "[\"decode-0\"]},\"unaligned_rows\":1,");
	CHECK_STR(column(t, "start"), "3,5.25");
	p.phase = "prefill"; /* [0, 2]: no iteration */
	t = run2(&pr, &p);
	HAS(t, "{\"total\":0,\"items\":[],\"offset\":0,\"limit\":100,"
	       "\"range\":[0.0,2.0],\"request\":{\"id\":\"req-001\","
	       "\"phase\":\"prefill\",\"window\":[0.0,2.0],");
	p.phase = "decode"; /* [2, 7] */
	CHECK_STR(column(run2(&pr, &p), "start"), "3,5.25");
	p.request_id = "req-002"; /* decode [4.3505, 9.25] */
	CHECK_STR(column(run2(&pr, &p), "start"), "5.25");
	p.request_id = "req-003";
	fail2(&pr, &p, ERR_USAGE,
	      "Request req-003 has no first token; use --phase whole");
	p.phase = "whole"; /* no workers: nothing, and a note */
	t = run2(&pr, &p);
	HAS(t, "{\"total\":0,");
	HAS(t, "\"workers\":[]},\"unaligned_rows\":0,");
	HAS(t, "\"notes\":[\"Request req-003 has no workers.\"]}");
	p.request_id = "req-999";
	fail2(&pr, &p, ERR_USAGE, "Unknown client request: req-999");
	/* nsys: the whole of req-001 touches [0, 7] on decode-0 only */
	p = kind_only("nsys");
	p.request_id = "req-001";
	p.phase = "whole";
	p.fields = LIST("name", "profile");
	t = run2(&pr, &p);
	HAS(t, "{\"profile\":0,\"name\":\"[Executor] forward step\"}");
	CHECK(!strstr(t, "\"profile\":1"));
	/* its prefill: decode-0 is a decode worker, so no worker is left */
	p.phase = "prefill";
	t = run2(&pr, &p);
	HAS(t, "\"workers\":[]},");
	HAS(t, "\"notes\":[\"No worker of request req-001 has the prefill "
	       "role: decode-0 is decode.\"]}");
	close_pair(&pr);
}

TEST(fields_keep_named_keys_in_item_order)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("requests");
	const char *t;

	p.fields = LIST("span_count", "nope", "id");
	p.limit = 1;
	HAS(run2(&pr, &p), "\"items\":[{\"id\":\"req-001\",\"span_count\":1}]");
	p = window("cpu", 0, 12);
	p.fields = LIST("samples");
	HAS(run2(&pr, &p), "\"items\":[{\"samples\":");
	p = kind_only("metrics");
	p.fields = LIST("mean", "id");
	p.limit = 1;
	HAS(run2(&pr, &p), "\"items\":[{\"id\":0,\"mean\":");
	p = kind_only("profiles");
	p.fields = LIST("cpu_samples");
	t = run2(&pr, &p);
	HAS(t, "\"items\":[{\"cpu_samples\":0},{\"cpu_samples\":");
	close_pair(&pr);
}

TEST(several_values_match_any)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("requests");

	p.session_list = LIST("sess-B", "sess-\xc3\x9c");
	CHECK_STR(column(run2(&pr, &p), "id"), "req-003,req-004");
	p = kind_only("sessions");
	p.agent_list = LIST("agent-A/sub-1", "sess-B");
	CHECK_STR(column(run2(&pr, &p), "id"), "sess-A,sess-B");
	p = kind_only("metrics");
	p.name_list = LIST("gpu_utilization", "num_requests_running");
	p.fields = LIST("name");
	CHECK_STR(column(run2(&pr, &p), "name"),
	          "num_requests_running,gpu_utilization");
	p = kind_only("nsys");
	p.name_list = LIST("TOKENIZE", "sampling");
	CHECK_STR(column(run2(&pr, &p), "name"),
	          "sampling_prep,sampling_prep,preprocess.tokenize,"
	          "sampling_prep");
	p = kind_only("profiles");
	p.worker_list = LIST("frontend", "nobody");
	CHECK_STR(column(run2(&pr, &p), "worker"), "frontend");
	close_pair(&pr);
}

TEST(notes_in_table_order)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("requests");
	const char *t;

	p.worker_list = LIST("nobody", "decode-0");
	p.session = "s-x";
	p.agent = "a-x";
	t = run2(&pr, &p);
	HAS(t, "\"range\":[0.0,12.0],\"notes\":[\"No worker named 'nobody'. "
	       "Workers: decode-0, frontend.\",\"No session named 's-x'. The "
	       "sessions kind lists them.\",\"No agent named 'a-x'. The "
	       "sessions kind lists agents.\"]}");
	p = kind_only("metrics");
	p.name = "running";
	HAS(run2(&pr, &p), "\"notes\":[\"No series named 'running'. Names "
	                   "containing it: num_requests_running, "
	                   "log_batch_running.\"]}");
	p = kind_only("cpu");
	p.worker = "decode-0";
	HAS(run2(&pr, &p), "\"notes\":[\"The selected profiles have no CPU "
	                   "samples. Profiles with CPU samples: 1.\"]}");
	p = kind_only("nsys");
	p.has_profile = 1;
	p.profile = 7;
	HAS(run2(&pr, &p), "\"partial\":false,\"notes\":[\"No profile 7; "
	                   "profiles are 0-1.\"]}");
	/* a result that is not empty has no notes */
	p = kind_only("requests");
	p.worker_list = LIST("nobody", "decode-0");
	CHECK(!strstr(run2(&pr, &p), "notes"));
	/* a worker named nowhere, on a kind without worker: no note */
	p = kind_only("sessions");
	p.worker = "nobody";
	p.session = "s-x";
	HAS(run2(&pr, &p), "\"notes\":[\"No session named 's-x'. The sessions "
	                   "kind lists them.\"]}");
	close_pair(&pr);
}

TEST(validation_order_and_texts)
{
	struct pair pr = open_pair(FIXTURE);
	struct query_params p = kind_only("nsys");

	/* kind before phase; phase before the join check; join before sort */
	p.kind = "nope";
	p.phase = "x";
	fail2(&pr, &p, ERR_USAGE,
	      "Unknown query kind 'nope'; choose from summary, requests, "
	      "request, lifecycle, metrics, profiles, nsys, gpu, cpu, iterations, "
	      "sources, server_spans, sessions, workers, families, timeline, sql");
	p.kind = "nsys";
	fail2(&pr, &p, ERR_USAGE, "--phase needs --request");
	p.request_id = "req-001";
	p.has_start = 1;
	p.start = 1;
	p.sort = LIST("nope");
	fail2(&pr, &p, ERR_USAGE,
	      "Unknown phase 'x'; choose from prefill, decode, whole");
	p.phase = "decode";
	fail2(&pr, &p, ERR_USAGE,
	      "--request sets the window and the workers; drop "
	      "--from/--to/--worker");
	p.has_start = 0;
	p.worker = "decode-0";
	fail2(&pr, &p, ERR_USAGE,
	      "--request sets the window and the workers; drop "
	      "--from/--to/--worker");
	p.worker = ""; /* one empty worker is no filter: not "given" */
	fail2(&pr, &p, ERR_USAGE,
	      "Unknown sort key 'nope' for nsys; choose from start, end, "
	      "duration, name, profile");
	p.sort = LIST("-nope");
	fail2(&pr, &p, ERR_USAGE,
	      "Unknown sort key 'nope' for nsys; choose from start, end, "
	      "duration, name, profile");
	/* kinds that take no sort or phase ignore them */
	p = kind_only("workers");
	p.sort = LIST("nope");
	p.phase = "x";
	HAS(run2(&pr, &p), "{\"total\":2,");
	/* the window message names the duration as a real */
	p = window("requests", 0, 13);
	fail2(&pr, &p, ERR_USAGE,
	      "Require 0 <= start < end <= 12.0 (run duration in seconds from "
	      "origin_ns)");
	close_pair(&pr);
}

TEST(lists_from_json_and_cli)
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
		query_params_free(&p);                                     \
		json_decref(j);                                            \
	} while (0)
	BAD("{\"worker\":[]}", "worker must not be an empty list");
	BAD("{\"session\":[\"a\",\"\"]}", "session values must not be empty");
	BAD("{\"name\":[\"a\",3]}",
	    "name must be a string, a list of strings or null");
	BAD("{\"sort\":[]}", "sort must not be an empty list");
	BAD("{\"fields\":{}}",
	    "fields must be a string, a list of strings or null");
#undef BAD
	j = json_loads("{\"worker\":[\"a\",\"b\"],\"sort\":\"-start,name\","
	               "\"fields\":[\"x\"],\"agent\":\"\"}",
	               0, NULL);
	CHECK(query_params_from_json(j, &p, &e) == 0);
	CHECK(p.worker_list.n == 2 && !strcmp(p.worker_list.v[1], "b"));
	CHECK(p.sort.n == 2 && !strcmp(p.sort.v[0], "-start") &&
	      !strcmp(p.sort.v[1], "name"));
	CHECK(p.fields.n == 1 && p.agent && !*p.agent);
	query_params_free(&p);
	json_decref(j);
	/* CLI: one empty --worker is no filter, two make a list */
	query_params_init(&p);
	CHECK(query_params_set_cli(&p, qparam_by_name("worker"), "", &e) == 0);
	CHECK(p.worker && !*p.worker && !p.worker_list.n);
	err_clear(&e);
	CHECK(query_params_set_cli(&p, qparam_by_name("worker"), "w", &e) ==
	      ERR_USAGE);
	CHECK_STR(e.msg, "worker values must not be empty");
	query_params_free(&p);
	CHECK(query_params_set_cli(&p, qparam_by_name("sort"), "a,-b", &e) == 0);
	CHECK(query_params_set_cli(&p, qparam_by_name("sort"), "c", &e) == 0);
	CHECK(p.sort.n == 3 && !strcmp(p.sort.v[2], "c"));
	query_params_free(&p);
}

TEST(join_edges_clamping_zero_length_and_phase_errors)
{
	const char *doc = tmp_path("join.json");
	struct pair pr;
	struct query_params p;
	const char *t;
	write_file(doc,
	           "{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	           "\"duration\":10.0},\"requests\":["
	           "{\"id\":\"r-late\",\"start\":2.0,\"end\":3.0,\"first\":4.0,"
	           "\"workers\":[\"w\"]},"
	           "{\"id\":\"r-early\",\"start\":5.0,\"end\":6.0,\"first\":1.0,"
	           "\"workers\":[\"w\"]},"
	           "{\"id\":\"r-out\",\"start\":-2.0,\"end\":12.0,\"first\":11.0,"
	           "\"workers\":[\"ghost\",\"w2\"]},"
	           "{\"id\":\"r-zero\",\"start\":7.0,\"end\":9.0,\"first\":7.0,"
	           "\"workers\":[\"w\"]}],"
	           "\"profiles\":[{\"id\":0,\"worker\":\"w\",\"rank\":0,"
	           "\"names\":[\"x\"],\"name_definitions\":[],\"events\":["
	           "[6.5,7.0,0,\"1\",1],[7.0,7.5,0,\"1\",2],"
	           "[7.25,8.0,0,\"1\",3]]}]}");
	pr = open_pair(doc);
	p = kind_only("nsys");
	p.request_id = "r-late";
	p.phase = "decode";
	fail2(&pr, &p, ERR_USAGE,
	      "Request r-late has its first token after its end; no decode "
	      "phase");
	p.phase = "prefill"; /* [2, 4]: fine, nothing there */
	HAS(run2(&pr, &p), "{\"total\":0,");
	p.request_id = "r-early";
	fail2(&pr, &p, ERR_USAGE,
	      "Request r-early has its first token before its start; no "
	      "prefill phase");
	/* a zero-length window [7, 7] takes what touches 7.0 */
	p.request_id = "r-zero";
	CHECK_STR(rowids(run2(&pr, &p)), "1,2");
	HAS(run2(&pr, &p), "\"range\":[7.0,7.0],\"request\":{\"id\":"
	                   "\"r-zero\",\"phase\":\"prefill\",\"window\":"
	                   "[7.0,7.0],\"workers\":[\"w\"]}");
	/* both ends clamped to [0, duration]: decode [11, 12] -> [10, 10] */
	p.request_id = "r-out";
	p.phase = "decode";
	t = run2(&pr, &p);
	HAS(t, "\"range\":[10.0,10.0],\"request\":{\"id\":\"r-out\","
	       "\"phase\":\"decode\",\"window\":[10.0,10.0],\"workers\":"
	       "[\"ghost\",\"w2\"]}");
	HAS(t, "\"partial\":false,\"notes\":[\"No profile belongs to the "
	       "workers of request r-out: ghost, w2.\",\"No role is known "
	       "for the workers of request r-out; kept every one for the "
	       "decode phase.\"]}");
	p = kind_only("cpu");
	p.request_id = "r-out";
	HAS(run2(&pr, &p), "\"range\":[0.0,10.0],");
	close_pair(&pr);
}

TEST(worker_note_lists_twenty_and_counts_the_rest)
{
	const char *doc = tmp_path("workers.json");
	struct pair pr;
	struct query_params p;
	char text[4096];
	size_t len;

	len = (size_t)snprintf(text, sizeof text,
	                       "{\"schema\":\"srtctl-trace/1\",\"meta\":{"
	                       "\"origin_ns\":\"0\",\"duration\":1.0},"
	                       "\"workers\":[");
	for (int k = 0; k < 23; k++)
		len += (size_t)snprintf(text + len, sizeof text - len,
		                        "%s{\"id\":\"w%02d\"}", k ? "," : "", k);
	snprintf(text + len, sizeof text - len, "]}");
	write_file(doc, text);
	pr = open_pair(doc);
	p = kind_only("workers");
	p.worker = "nobody";
	HAS(run2(&pr, &p),
	    "\"notes\":[\"No worker named 'nobody'. Workers: w00, w01, w02, "
	    "w03, w04, w05, w06, w07, w08, w09, w10, w11, w12, w13, w14, w15, "
	    "w16, w17, w18, w19, and 3 more.\"]}");
	close_pair(&pr);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(sort_nulls_last_both_ways_and_ties_keep_default_order);
	RUN(sort_sessions_iterations_nsys);
	RUN(join_windows_workers_and_response);
	RUN(fields_keep_named_keys_in_item_order);
	RUN(several_values_match_any);
	RUN(notes_in_table_order);
	RUN(validation_order_and_texts);
	RUN(lists_from_json_and_cli);
	RUN(join_edges_clamping_zero_length_and_phase_errors);
	RUN(worker_note_lists_twenty_and_counts_the_rest);
	return querylib_done();
}
