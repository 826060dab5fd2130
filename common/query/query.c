/* query: the table of kinds, validation and dispatch (see query.h). */
#include "query/query.h"

#include <math.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qjoin.h"
#include "query/qkinds.h"
#include "query/qrange.h"
#include "query/qtsort.h"

static int run_request(struct qctx *q)
{
	return query_request(q, 0);
}

static int run_lifecycle(struct qctx *q)
{
	return query_request(q, 1);
}

/* --group-by: the grouped form of the kind (query_group.c), chosen here so
 * that the kinds never call it (it calls their matchers). */
static int run_requests(struct qctx *q)
{
	return q->p->group_by ? query_requests_grouped(q) : query_requests(q);
}

static int run_nsys(struct qctx *q)
{
	return q->p->group_by ? query_nsys_grouped(q) : query_nsys(q);
}

const struct qkind query_kind_table[] = {
	{"summary", query_summary,
	 "schema, meta, audit, capabilities, counts", NULL, NULL},
	{"requests", run_requests, "client requests overlapping the window",
	 "queryRequests",
	 "requests --sort -ttft_ms --limit 5 --fields id,ttft_ms,workers"},
	{"request", run_request, "one whole request", "getRequest",
	 "request --request req-0001"},
	{"lifecycle", run_lifecycle, "one request's lifecycle", NULL,
	 "lifecycle --request req-0001"},
	{"metrics", query_metrics,
	 "series windows with samples/min/max/mean/last", "queryMetrics",
	 "metrics --worker decode-0 --rank 0 --points"},
	{"profiles", query_profiles, "Nsight profiles", "queryProfiles",
	 "profiles --worker decode-0"},
	{"nsys", run_nsys, "NVTX ranges overlapping the window", "queryNsys",
	 "nsys --request req-0001 --phase prefill --fields name,start,end"},
	{"gpu", query_gpu,
	 "GPU kernels, copies and memsets overlapping the window", NULL,
	 "gpu --gpu-kind kernel --group-by name --limit 10"},
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
	{"timeline", query_timeline,
	 "time buckets of requests, NVTX ranges, CPU samples or metrics", NULL,
	 "timeline --bucket 10 --of nsys --group-by name"},
	{"sql", query_sql,
	 "one read-only SQL statement on the report's SQLite cache and views",
	 NULL,
	 "sql --sql 'SELECT name, count(*) AS n FROM nvtx GROUP BY name "
	 "ORDER BY n DESC LIMIT 5'"},
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

/* ---- validation, in the documented order ---- */

static int check_window(struct qctx *q)
{
	struct buf d;
	int rc;

	if (isfinite(q->start) && isfinite(q->end) && q->start >= 0 &&
	    q->start < q->end && q->end <= q->duration)
		return 0;
	buf_init(&d, 0);
	jsonout_real(&d, q->duration);
	rc = d.failed ? err_set(q->e, ERR_NOMEM, "out of memory")
	              : err_set(q->e, ERR_USAGE,
	                        "Require 0 <= start < end <= %s (run duration "
	                        "in seconds from origin_ns)",
	                        d.data);
	buf_free(&d);
	return rc;
}

static int check_page(struct qctx *q)
{
	if (q->p->offset < 0 || q->p->limit < 0 || q->p->limit > 1000)
		return err_set(q->e, ERR_USAGE,
		               "Require integer offset >= 0 and 0 <= limit <= 1000");
	return 0;
}

static int check_ttft(struct qctx *q)
{
	if (!isfinite(q->p->min_ttft_ms) || !(q->p->min_ttft_ms >= 0))
		return err_set(q->e, ERR_USAGE,
		               "min_ttft_ms must be finite and nonnegative");
	return 0;
}

static int check_kind(struct qctx *q)
{
	return query_kind_find(q->kind) ? 0 : unknown_kind(q->kind, q->e);
}

static int check_phase(struct qctx *q)
{
	const struct qparam *qp = qparam_by_name("phase");
	const char *ph = q->p->phase, *c;
	size_t n;

	if (!ph || !qparam_used_by(qp, q->kind))
		return 0;
	if (!q->p->request_id)
		return err_set(q->e, ERR_USAGE, "--phase needs --request");
	n = strlen(ph);
	for (c = qp->choices; *c; c += strspn(c, " ")) {
		size_t w = strcspn(c, " ");
		if (w == n && !strncmp(c, ph, n))
			return 0;
		c += w;
	}
	return err_set(q->e, ERR_USAGE,
	               "Unknown phase '%s'; choose from prefill, decode, whole",
	               ph);
}

static int check_gpu_kind(struct qctx *q)
{
	const char *k = q->p->gpu_kind;
	if (!k || strcmp(q->kind, "gpu") != 0 || !strcmp(k, "kernel") ||
	    !strcmp(k, "memcpy") || !strcmp(k, "memset"))
		return 0;
	return err_set(q->e, ERR_USAGE, "Unknown gpu_kind '%s'; choose from "
	               "kernel, memcpy, memset", k);
}

static int check_join(struct qctx *q)
{
	const struct query_params *p = q->p;
	if (!p->request_id || !qjoin_applies(q->kind))
		return 0;
	if (p->has_start || p->has_end || q_given(p->worker) ||
	    p->worker_list.n)
		return err_set(q->e, ERR_USAGE,
		               "--request sets the window and the workers; drop "
		               "--from/--to/--worker");
	return 0;
}

static int check_sort(struct qctx *q)
{
	const char *const *gkeys = query_group_sort_keys(q->kind);
	if (!qparam_used_by(qparam_by_name("sort"), q->kind))
		return 0;
	if (!strcmp(q->kind, "timeline")) /* --sort orders the buckets */
		return qtsort_check(q);
	if (q->p->group_by && gkeys) /* --sort orders the groups */
		return qorder_parse_keys(q->kind, gkeys, &q->p->sort, &q->order,
		                         q->e);
	return qorder_parse(q->kind, &q->p->sort, &q->order, q->e);
}

static int check_timeline(struct qctx *q)
{
	if (strcmp(q->kind, "timeline") != 0)
		return 0;
	return q_timeline_check(q);
}

/* The checks after the types, in order; the first failure wins. */
static int (*const checks[])(struct qctx *) = {
	check_window, check_page,  check_ttft, check_kind, check_timeline,
	check_phase,  check_gpu_kind, check_join, check_sort, q_group_check,
	qrange_check,
};

/* A filter from one value or a list (empty_is_none: one "" is none). */
static void filter(struct qfilter *f, const char *one,
                   const struct qlist *list, int empty_is_none,
                   const char **slot)
{
	memset(f, 0, sizeof *f);
	if (list->n) {
		f->v = list->v;
		f->n = list->n;
		f->on = 1;
	} else if (one && (*one || !empty_is_none)) {
		*slot = one;
		f->v = slot;
		f->n = 1;
		f->on = 1;
	}
}

int query_run(struct dataset *ds, const struct query_params *p,
              struct buf *out, struct err *e)
{
	struct qctx q;
	const struct qkind *k;
	const json_t *meta;
	const char *slots[4];
	double duration;
	int ok, rc = 0;

	memset(&q, 0, sizeof q);
	q.ds = ds;
	q.cat = dataset_catalog(ds);
	q.p = p;
	q.kind = p->kind ? p->kind : "summary";
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
	for (size_t c = 0; c < sizeof checks / sizeof *checks && !rc; c++)
		rc = checks[c](&q);
	filter(&q.workers, p->worker, &p->worker_list, 1, &slots[0]);
	filter(&q.sessions, p->session, &p->session_list, 0, &slots[1]);
	filter(&q.agents, p->agent, &p->agent_list, 0, &slots[2]);
	filter(&q.names, p->name, &p->name_list, 0, &slots[3]);
	if (!rc && p->request_id && qjoin_applies(q.kind))
		rc = qjoin_resolve(&q);
	if (!rc && !strcmp(q.kind, "timeline")) /* the resolved window */
		rc = q_timeline_count(&q);
	if (!rc) {
		k = query_kind_find(q.kind);
		/* one read transaction: the cache is locked and checked once */
		rc = dataset_read_begin(ds, e);
		if (!rc) {
			rc = k->run(&q);
			dataset_read_end(ds);
		}
	}
	qorder_free(&q.order);
	qjoin_free(&q.join);
	json_decref(q.held);
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
