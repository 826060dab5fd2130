/*
 * test_query_round2: the depth of NVTX ranges and the range filters, cpu
 * --self, metric roll-ups, timeline --sort and the phase's own workers,
 * with expected values worked out by hand on a small document, on both
 * backends (querylib.h).
 */
#include "querylib.h"

/* Ranges of one profile (ordinal: row): A [0,10] t1 (1), B = A (2),
 * C [2,5] t1 (3), F [2,5] t2 (4), D [4,12] t1 (5), E [4,5] t1 (6).
 * Depths: A 0, B 1 (A is earlier), C 2 (A, B), F 0 (its own thread),
 * D 0 (A ends first: partly overlapping), E 4 (A, B, C, D). */
static const char *doc_text =
	"{\"schema\":\"srtctl-trace/1\",\"meta\":{\"origin_ns\":\"0\","
	"\"duration\":20.0},"
	"\"workers\":[{\"id\":\"p\",\"role\":\"prefill\"},"
	"{\"id\":\"d\",\"role\":\"decode\"}],"
	"\"requests\":[{\"id\":\"r1\",\"start\":1.0,\"end\":8.0,\"first\":3.0,"
	"\"workers\":[\"p\",\"d\"]}],"
	"\"profiles\":[{\"id\":0,\"worker\":\"p\",\"rank\":0,"
	"\"names\":[\"x\"],\"name_definitions\":[{\"d\":1}],\"events\":["
	"[0.0,10.0,0,\"1\",1],[0.0,10.0,0,\"1\",2],[2.0,5.0,0,\"1\",3],"
	"[2.0,5.0,0,\"2\",4],[4.0,12.0,0,\"1\",5],[4.0,5.0,0,\"1\",6]],"
	"\"cpu\":{\"pid\":1,\"names\":[\"leaf\",\"mid\",\"main\"],"
	"\"stacks\":[[0,1,2],[1,2],[2]],\"samples\":[[1.0,\"1\",0,1],"
	"[2.0,\"1\",0,2],[3.0,\"1\",1,3],[4.0,\"1\",2,4]],"
	"\"attribution\":\"a\",\"evidence\":\"e\"}}],"
	"\"metrics\":["
	"{\"id\":0,\"name\":\"run\",\"worker\":\"p\",\"rank\":\"0\",\"gpu\":\"0\","
	"\"group\":\"g\",\"labels\":{},\"unit\":\"u\","
	"\"points\":[[1.0,2,0,1],[2.0,4,0,2]]},"
	"{\"id\":1,\"name\":\"run\",\"worker\":\"d\",\"rank\":\"0\",\"gpu\":\"1\","
	"\"group\":\"g\",\"labels\":{},\"unit\":\"u\","
	"\"points\":[[1.0,1.5,0,3],[3.0,null,0,4]]}]}";

static struct query_params kind_only(const char *kind)
{
	struct query_params p;
	query_params_init(&p);
	p.kind = kind;
	return p;
}

static const char *depths(const char *text)
{
	static char out[256];
	json_t *j = json_loads(text, 0, NULL), *v;
	size_t k, len = 0;
	out[0] = '\0';
	json_array_foreach(json_object_get(j, "items"), k, v) {
		len += (size_t)snprintf(
			out + len, sizeof out - len, "%s%lld", k ? "," : "",
			(long long)json_integer_value(json_object_get(v, "depth")));
	}
	json_decref(j);
	return out;
}

TEST(depth_and_range_filters)
{
	const char *doc = tmp_path("round2.json");
	struct pair pr;
	struct query_params p;

	write_file(doc, doc_text);
	pr = open_pair(doc);
	p = kind_only("nsys");
	CHECK_STR(rowids(run2(&pr, &p)), "1,2,3,4,5,6");
	CHECK_STR(depths(run2(&pr, &p)), "0,1,2,0,0,4");
	p.has_max_depth = 1;
	p.max_depth = 1;
	CHECK_STR(rowids(run2(&pr, &p)), "1,2,4,5");
	/* a short window: the depths come from the ranges overlapping it */
	p.max_depth = 0;
	p.has_start = p.has_end = 1;
	p.start = 4.5;
	p.end = 4.6;
	CHECK_STR(rowids(run2(&pr, &p)), "1,4,5");
	p = kind_only("nsys");
	p.has_min_duration = p.has_max_duration = 1;
	p.min_duration = 3;
	p.max_duration = 8;
	CHECK_STR(rowids(run2(&pr, &p)), "3,4,5");
	p.group_by = "name";
	HAS(run2(&pr, &p), "{\"total\":3,\"groups\":1,\"items\":[{\"key\":\"x\","
	                   "\"count\":3,\"duration_total\":14.0,");
	/* timeline of the outermost ranges: A, F, D */
	p = kind_only("timeline");
	p.of = "nsys";
	p.has_bucket = 1;
	p.bucket = 10;
	p.has_max_depth = 1;
	HAS(run2(&pr, &p), "\"series\":[{\"key\":0,\"values\":{\"overlapping\":"
	                   "[3,2],\"active\":[19.0,2.0]}}]");
	close_pair(&pr);
}

TEST(cpu_self_and_profiles_lean)
{
	struct pair pr = open_pair(tmp_path("round2.json"));
	struct query_params p = kind_only("cpu");

	HAS(run2(&pr, &p), "\"items\":[{\"symbol\":\"main\",\"samples\":4,");
	CHECK(!strstr(run2(&pr, &p), "\"mode\""));
	p.self_time = 1;
	HAS(run2(&pr, &p),
	    "{\"total\":3,\"items\":[{\"symbol\":\"leaf\",\"samples\":2,"
	    "\"fraction\":0.5},{\"symbol\":\"main\",\"samples\":1,\"fraction\":"
	    "0.25},{\"symbol\":\"mid\",\"samples\":1,\"fraction\":0.25}],");
	HAS(run2(&pr, &p), "\"total_samples\":4,\"mode\":\"self\",");
	p = kind_only("profiles");
	CHECK(!strstr(run2(&pr, &p), "name_definitions"));
	p.fields = (struct qlist){(const char *const[]){"name_definitions"}, 1};
	HAS(run2(&pr, &p), "{\"name_definitions\":[{\"d\":1}]}");
	close_pair(&pr);
}

TEST(metric_roll_ups)
{
	struct pair pr = open_pair(tmp_path("round2.json"));
	struct query_params p = kind_only("metrics");

	p.group_by = "name";
	HAS(run2(&pr, &p),
	    "{\"total\":1,\"items\":[{\"key\":\"run\",\"series\":2,\"samples\":3,"
	    "\"min\":1.5,\"max\":4,\"mean\":2.5,\"sum_of_means\":4.5}],");
	HAS(run2(&pr, &p), "\"group_by\":\"name\"}");
	p.group_by = "gpu";
	HAS(run2(&pr, &p),
	    "\"items\":[{\"key\":\"0\",\"series\":1,\"samples\":2,\"min\":2,"
	    "\"max\":4,\"mean\":3.0,\"sum_of_means\":3.0},{\"key\":\"1\","
	    "\"series\":1,\"samples\":1,\"min\":1.5,\"max\":1.5,\"mean\":1.5,"
	    "\"sum_of_means\":1.5}]");
	/* per bucket: [0, 2): both series; [2, 4): one point of series 0 */
	p = kind_only("timeline");
	p.of = "metrics";
	p.group_by = "group";
	p.has_bucket = p.has_end = 1;
	p.bucket = 2;
	p.end = 4;
	HAS(run2(&pr, &p),
	    "\"series\":[{\"key\":\"g\",\"values\":{\"series\":[2,1],"
	    "\"samples\":[2,1],\"min\":[1.5,4],\"max\":[2,4],\"mean\":[1.75,4.0],"
	    "\"sum_of_means\":[3.5,4.0]}}]");
	/* the same as top buckets */
	p.sort = (struct qlist){(const char *const[]){"-mean"}, 1};
	p.fields = (struct qlist){(const char *const[]){"mean"}, 1};
	HAS(run2(&pr, &p),
	    "{\"of\":\"metrics\",\"bucket\":2.0,\"key\":\"g\",\"total\":2,"
	    "\"items\":[{\"start\":2.0,\"end\":4.0,\"mean\":4.0},{\"start\":0.0,"
	    "\"end\":2.0,\"mean\":1.75}],\"offset\":0,\"limit\":100,");
	close_pair(&pr);
}

TEST(phase_keeps_its_workers)
{
	struct pair pr = open_pair(tmp_path("round2.json"));
	struct query_params p = kind_only("metrics");

	p.request_id = "r1";
	p.phase = "prefill";
	HAS(run2(&pr, &p), "\"request\":{\"id\":\"r1\",\"phase\":\"prefill\","
	                   "\"window\":[1.0,3.0],\"workers\":[\"p\"]}");
	p.phase = "decode";
	HAS(run2(&pr, &p), "\"workers\":[\"d\"]}");
	p.phase = "whole";
	HAS(run2(&pr, &p), "\"workers\":[\"p\",\"d\"]}");
	close_pair(&pr);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(depth_and_range_filters);
	RUN(cpu_self_and_profiles_lean);
	RUN(metric_roll_ups);
	RUN(phase_keeps_its_workers);
	return querylib_done();
}
