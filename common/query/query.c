/* query: the table of kinds, validation and dispatch (see query.h). */
#include "query/query.h"

#include <math.h>
#include <string.h>

#include "query/qkinds.h"

static int run_request(struct qctx *q)
{
	return query_request(q, 0);
}

static int run_lifecycle(struct qctx *q)
{
	return query_request(q, 1);
}

const struct qkind query_kind_table[] = {
	{"summary", query_summary,
	 "schema, meta, audit, capabilities, counts", NULL, NULL},
	{"requests", query_requests, "client requests overlapping the window",
	 "queryRequests", "requests --from 3 --to 4 --search chat --limit 10"},
	{"request", run_request, "one whole request", "getRequest",
	 "request --request req-0001"},
	{"lifecycle", run_lifecycle, "one request's lifecycle", NULL,
	 "lifecycle --request req-0001"},
	{"metrics", query_metrics,
	 "series windows with samples/min/max/mean/last", "queryMetrics",
	 "metrics --worker decode-0 --rank 0 --points"},
	{"profiles", query_profiles, "Nsight profiles", "queryProfiles",
	 "profiles --worker decode-0"},
	{"nsys", query_nsys, "NVTX ranges overlapping the window", "queryNsys",
	 "nsys --from 9 --to 10 --profile 0 --name forward"},
	{"cpu", query_cpu, "inclusive CPU hotspots", "queryCpu",
	 "cpu --worker frontend --limit 20"},
	{"iterations", query_iterations, "batch observations",
	 "queryIterations", "iterations --worker decode-0 --rank 0"},
	{"sources", query_sources, "the source inventory", NULL, "sources"},
	{"server_spans", query_server_spans,
	 "server spans not joined to a request", "queryServerSpans",
	 "server_spans --from 0 --to 5"},
	{"sessions", query_sessions, "sessions", "listSessions",
	 "sessions --agent planner"},
	{"workers", query_workers, "the worker catalog", NULL, "workers"},
	{"families", query_families, "metric families", "listMetricFamilies",
	 "families --name queue"},
};
const size_t query_kind_count =
	sizeof query_kind_table / sizeof query_kind_table[0];

const struct qkind *query_kind_find(const char *name)
{
	for (size_t k = 0; k < query_kind_count; k++)
		if (!strcmp(query_kind_table[k].name, name))
			return &query_kind_table[k];
	return NULL;
}

static int unknown_kind(const char *kind, struct err *e)
{
	struct buf b;
	int rc;

	buf_init(&b, 0);
	for (size_t k = 0; k < query_kind_count; k++) {
		buf_puts(&b, k ? ", " : "");
		buf_puts(&b, query_kind_table[k].name);
	}
	rc = b.failed ? err_set(e, ERR_NOMEM, "out of memory")
	              : err_set(e, ERR_USAGE,
	                        "Unknown query kind '%s'; choose from %s",
	                        kind, b.data);
	buf_free(&b);
	return rc;
}

int query_run(struct dataset *ds, const struct query_params *p,
              struct buf *out, struct err *e)
{
	struct qctx q;
	const char *kind = p->kind ? p->kind : "summary";
	const struct qkind *k;
	const json_t *meta;
	double duration;
	int ok, rc;

	memset(&q, 0, sizeof q);
	q.ds = ds;
	q.cat = dataset_catalog(ds);
	q.p = p;
	q.out = out;
	q.e = e;
	meta = json_object_get(q.cat, "meta");
	duration = q_number(meta, "duration", &ok);
	if (!ok || !isfinite(duration) || duration <= 0)
		return err_set(e, ERR_DATA,
		               "The dataset's meta.duration is not a finite number "
		               "> 0");
	q.duration = duration;
	q.start = p->has_start ? p->start : 0.0;
	q.end = p->has_end ? p->end : duration;
	if (!isfinite(q.start) || !isfinite(q.end) || !(q.start >= 0) ||
	    !(q.start < q.end) || !(q.end <= duration))
		return err_set(e, ERR_USAGE,
		               "Require 0 <= start < end <= run duration (seconds "
		               "from origin_ns)");
	if (p->offset < 0 || p->limit < 0 || p->limit > 1000)
		return err_set(e, ERR_USAGE,
		               "Require integer offset >= 0 and 0 <= limit <= 1000");
	if (!isfinite(p->min_ttft_ms) || !(p->min_ttft_ms >= 0))
		return err_set(e, ERR_USAGE,
		               "min_ttft_ms must be finite and nonnegative");
	if (!(k = query_kind_find(kind)))
		return unknown_kind(kind, e);
	rc = k->run(&q);
	if (!rc && out->failed)
		rc = err_set(e, out->failed,
		             out->failed == ERR_LIMIT
		                     ? "The response exceeds the output size limit"
		             : out->failed == ERR_NOMEM
		                     ? "Out of memory while writing the response"
		                     : "The response would hold a non-finite "
		                       "number");
	return rc;
}
