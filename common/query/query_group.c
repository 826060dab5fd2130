/* query_group: `--group-by` on nsys and requests: the rows that match
 * without grouping, grouped by one field; offset/limit page the groups
 * (doc/query-semantics.md "Grouping"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/text.h"
#include "base/vec.h"
#include "query/qgroup.h"
#include "query/qstat.h"
#include "query/qkinds.h"
#include "query/qrange.h"

static const char *const nsys_fields[] = {"name", "worker", "profile", "tid",
                                          NULL};
static const char *const requests_fields[] = {"session", "agent", "worker",
                                              "status", "client_kind", NULL};
static const char *const timeline_fields[] = {"name", NULL};
static const char *const gpu_fields[] = {"name", "device", "stream",
                                         "gpu_kind", "nvtx", NULL};
static const char *const metrics_fields[] = {"name", "worker", "group", "gpu",
                                             "host", NULL};

/* Sort keys of the groups, in the order the messages list them; the index
 * of each is its value index in the group's sort values (key excepted). */
static const char *const nsys_keys[] = {
	"count", "clipped_total", "duration_total", "duration_max",
	"duration_mean", "key", NULL};
enum { NV_COUNT, NV_CLIPPED, NV_TOTAL, NV_MAX, NV_MEAN, NV_N };

static const char *const requests_keys[] = {
	"count", "key", "input_tokens", "output_tokens",
	"ttft_ms.min", "ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99",
	"ttft_ms.max", "ttft_ms.mean",
	"duration.min", "duration.p50", "duration.p90", "duration.p99",
	"duration.max", "duration.mean", NULL};
/* value indexes: count, (key), input, output, ttft[6], duration[6] */
enum { RV_COUNT, RV_IN, RV_OUT, RV_TTFT, RV_DUR = RV_TTFT + QSTAT_N,
       RV_N = RV_DUR + QSTAT_N };

const char *const *query_group_fields(const char *kind)
{
	if (!strcmp(kind, "nsys"))
		return nsys_fields;
	if (!strcmp(kind, "gpu"))
		return gpu_fields;
	if (!strcmp(kind, "requests"))
		return requests_fields;
	if (!strcmp(kind, "timeline"))
		return timeline_fields;
	if (!strcmp(kind, "metrics"))
		return metrics_fields;
	return NULL;
}

const char *const *query_group_sort_keys(const char *kind)
{
	if (!strcmp(kind, "nsys") || !strcmp(kind, "gpu"))
		return nsys_keys;
	if (!strcmp(kind, "requests"))
		return requests_keys;
	return NULL;
}

int q_group_check(struct qctx *q)
{
	const char *kind = q->kind;
	const char *const *fields;
	struct buf list;
	int rc;

	if (!q->p->group_by)
		return 0;
	fields = query_group_fields(kind);
	if (!strcmp(kind, "timeline")) {
		const char *of = q->p->of ? q->p->of : "requests";
		if (!strcmp(of, "metrics"))
			fields = metrics_fields;
		else if (strcmp(of, "nsys") != 0)
			return 0; /* ignored: only of=nsys and metrics group */
	}
	if (!fields)
		return 0; /* a kind that does not group ignores it */
	for (size_t k = 0; fields[k]; k++)
		if (!strcmp(fields[k], q->p->group_by))
			return 0;
	buf_init(&list, 0);
	for (size_t k = 0; fields[k]; k++) {
		if (k)
			buf_puts(&list, ", ");
		buf_puts(&list, fields[k]);
	}
	rc = err_set(q->e, ERR_USAGE,
	             "Unknown group-by field '%s' for %s; choose from %s",
	             q->p->group_by, kind, list.data ? list.data : "");
	buf_free(&list);
	return rc;
}

/* The value index of a sort key of table (QGROUP_KEY for "key"); -2 when
 * unknown. */
static int key_index(const char *const *table, const char *name,
                     size_t len)
{
	int v = 0;
	for (size_t k = 0; table[k]; k++) {
		if (!strcmp(table[k], "key")) {
			if (len == 3 && !memcmp(name, "key", 3))
				return QGROUP_KEY;
			continue;
		}
		if (strlen(table[k]) == len && !memcmp(table[k], name, len))
			return v;
		v++;
	}
	return -2;
}

/* The sort keys validation parsed into q->order (group keys: see
 * query.c check_sort) as qgroup_by; *n 0 without sort keys. */
static int sort_spec(struct qctx *q, const char *const *table,
                     struct qgroup_by **out, size_t *n)
{
	size_t cap = q->order.n;
	*n = 0;
	*out = malloc((cap ? cap : 1) * sizeof **out);
	if (!*out)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; k < cap; k++) {
		const char *s = q->order.keys[k].name;
		int v = key_index(table, s, strlen(s));
		if (v == -2)
			continue;
		(*out)[*n].val = v;
		(*out)[(*n)++].desc = q->order.keys[k].desc;
	}
	return 0;
}

/* `,"group_by":"<field>"` after the list tail. */
static void group_by_member(struct qctx *q)
{
	buf_puts(q->out, ",\"group_by\":");
	jsonout_cstr(q->out, q->p->group_by);
}

/* ---- nsys ---- */

enum { BY_NAME, BY_WORKER, BY_PROFILE, BY_TID };

struct nscan {
	struct qctx *q;
	int by;
	struct qkeys keys;
	struct qnvtx *g;
	size_t cap;
	int oom;
	/* the current profile */
	const json_t *names;
	const unsigned char *name_ok; /* NULL = no name filter */
	size_t nnames;
	int64_t *name_group;          /* BY_NAME: per name index, -2 unset */
	int64_t profile_group;        /* BY_WORKER, BY_PROFILE; -2 unset */
	const json_t *pr;
	size_t pi;
	q_group_row_fn hook; /* also sees each row with its group, or NULL */
	void *hook_ctx;
	/* edge scans around the summarised bins: 1 keeps the rows starting
	 * before edge_at, 2 those starting at or after it, 0 all */
	int edge;
	double edge_at;
};

/* The group of the current profile (its worker or id), created with its
 * first matching row. */
static int64_t profile_group(struct nscan *s)
{
	const json_t *worker = json_object_get(s->pr, "worker");
	if (s->profile_group != -2)
		return s->profile_group;
	if (s->by == BY_PROFILE)
		s->profile_group = qkeys_int(&s->keys, q_id(s->pr, s->pi));
	else if (json_is_string(worker))
		s->profile_group = qkeys_str(&s->keys, json_string_value(worker),
		                             json_string_length(worker));
	else
		s->profile_group = qkeys_null(&s->keys);
	return s->profile_group;
}

/* The group of key index gi exists in s->g (grown as keys appear; a
 * zeroed qnvtx is an empty group); -1 for gi < 0 or out of memory. */
static int ensure_group(struct nscan *s, int64_t gi)
{
	return gi < 0 || vec_reserve_zero(&s->g, &s->cap, (size_t)gi + 1,
	                                  sizeof *s->g)
	               ? -1
	               : 0;
}

static int64_t name_key(struct qkeys *keys, const json_t *names, int64_t i)
{
	const json_t *v = i >= 0 ? json_array_get(names, (size_t)i) : NULL;
	if (json_is_string(v))
		return qkeys_str(keys, json_string_value(v),
		                 json_string_length(v));
	return qkeys_null(keys);
}

static int on_group_event(void *ctx, int64_t ordinal,
                          const struct row_event *row)
{
	struct nscan *s = ctx;
	int64_t gi;
	int in_dict = row->name >= 0 && (uint64_t)row->name < s->nnames;

	(void)ordinal;
	if ((s->edge == 1 && !(row->start < s->edge_at)) ||
	    (s->edge == 2 && !(row->start >= s->edge_at)))
		return 0;
	if (s->name_ok && (!in_dict || !s->name_ok[row->name]))
		return 0;
	switch (s->by) {
	case BY_NAME:
		if (!in_dict) {
			gi = qkeys_null(&s->keys);
		} else {
			gi = s->name_group[row->name];
			if (gi == -2) {
				gi = name_key(&s->keys, s->names, row->name);
				s->name_group[row->name] = gi;
			}
		}
		break;
	case BY_TID:
		gi = qkeys_str(&s->keys, row->tid, row->tid_len);
		break;
	default:
		gi = profile_group(s);
	}
	if (ensure_group(s, gi)) {
		s->oom = 1;
		return 1;
	}
	qnvtx_add(&s->g[gi], row->start, row->end, s->q->start, s->q->end);
	return s->hook ? s->hook(s->hook_ctx, gi, row) : 0;
}

/* One name's whole-run summary (dataset_run_names): merged into its group
 * exactly as on_group_event would add its ranges one by one (the sums are
 * exact, so the order does not matter). */
static int on_group_name(void *ctx, int64_t name, int64_t count, double max,
                         const double *dur, size_t ndur, const double *clip,
                         size_t nclip)
{
	struct nscan *s = ctx;
	int in_dict = name >= 0 && (uint64_t)name < s->nnames;
	struct qnvtx *g;
	int64_t gi;

	if (s->name_ok && (!in_dict || !s->name_ok[name]))
		return 0;
	if (!in_dict) {
		gi = qkeys_null(&s->keys);
	} else {
		gi = s->name_group[name];
		if (gi == -2) {
			gi = name_key(&s->keys, s->names, name);
			s->name_group[name] = gi;
		}
	}
	if (ensure_group(s, gi)) {
		s->oom = 1;
		return ERR_NOMEM;
	}
	g = &s->g[gi];
	if (!g->count || max > g->max)
		g->max = max;
	g->count += count;
	for (size_t k = 0; k < ndur; k++)
		qsum_add(&g->duration, dur[k]);
	for (size_t k = 0; k < nclip; k++)
		qsum_add(&g->clipped, clip[k]);
	return 0;
}

/* A range listed by the bins (it crosses a bin end): added as a row. */
static int on_group_cross(void *ctx, int64_t name, double start, double end)
{
	struct row_event row = row_event_of(name, start, end);

	return on_group_event(ctx, -1, &row) ? ERR_NOMEM : 0;
}

/* The profile's groups by name over the window from the bins of seconds
 * i0..i1-1 (store/store_sumnames.h: the ranges starting in them) plus
 * scans of [start, i0] for the ranges starting before i0 and of [i1, end]
 * for those starting at or after i1; *have 0 when it has no bins. */
static int binned_profile(struct nscan *s, int64_t profile, int64_t i0,
                          int64_t i1, int *have)
{
	struct qctx *q = s->q;
	struct row_window left = {q->start, (double)i0, 0};
	struct row_window right = {(double)i1, q->end, 0};
	/* whole 10-second bins [j0, j1) inside [i0, i1), the seconds around
	 * them from the 1-second bins (every start in [i0, i1) is in exactly
	 * one of the three pieces) */
	int64_t j0 = (i0 + 9) / 10, j1 = i1 / 10;
	const struct store_sumnames_visit v = {on_group_name, NULL,
	                                       on_group_cross, s};
	const struct row_bins tens = {profile, 10.0, j0, j1};
	const struct row_bins all = {profile, 1.0, i0, i1};
	const struct row_bins before = {profile, 1.0, i0, j0 * 10};
	const struct row_bins after = {profile, 1.0, j1 * 10, i1};
	int rc = 0, h;

	*have = 0;
	if (j0 < j1)
		rc = dataset_name_bins(q->ds, &tens, have, &v, q->e);
	if (rc)
		return rc;
	if (!*have) {
		rc = dataset_name_bins(q->ds, &all, have, &v, q->e);
	} else {
		rc = dataset_name_bins(q->ds, &before, &h, &v, q->e);
		if (!rc && h)
			rc = dataset_name_bins(q->ds, &after, &h, &v, q->e);
		if (!rc && !h)
			rc = err_set(q->e, ERR_DATA, "the name bins of profile %lld "
			             "are incomplete", (long long)profile);
	}
	if (rc || !*have)
		return rc;
	s->edge = 1;
	s->edge_at = (double)i0;
	rc = dataset_events(q->ds, profile, &left, on_group_event, s, q->e);
	s->edge = 2;
	s->edge_at = (double)i1;
	if (!rc)
		rc = dataset_events(q->ds, profile, &right, on_group_event, s,
		                    q->e);
	s->edge = 0;
	return rc;
}

/* Sets up s for profile pr (index pi); 0 or -1 out of memory. */
static int nscan_profile(struct nscan *s, const json_t *pr, size_t pi,
                         const struct q_needle *nd, size_t nn)
{
	s->pr = pr;
	s->pi = pi;
	s->profile_group = -2;
	s->names = json_object_get(pr, "names");
	s->nnames = json_array_size(s->names);
	s->name_ok = NULL;
	s->name_group = NULL;
	if (nd && !(s->name_ok = q_match_names(s->names, nd, nn)))
		return -1;
	if (s->by == BY_NAME) {
		s->name_group = malloc((s->nnames ? s->nnames : 1) *
		                       sizeof *s->name_group);
		if (!s->name_group)
			return -1;
		for (size_t k = 0; k < s->nnames; k++)
			s->name_group[k] = -2;
	}
	return 0;
}

int q_nsys_groups(struct qctx *q, const char *field, struct q_nvtx_groups *out)
{
	return q_nsys_groups_hook(q, field, NULL, NULL, out);
}

int q_nsys_groups_hook(struct qctx *q, const char *field, q_group_row_fn hook,
                       void *hook_ctx, struct q_nvtx_groups *out)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct row_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	struct nscan s;
	struct q_needle *nd = NULL;
	size_t nn = 0, *idx = NULL, n = 0;
	/* whole bins [i0, i1) of a window that is not the whole run */
	double c0 = ceil(q->start), c1 = floor(q->end);
	int binned = !hook && !q_whole_run(q) && q->start >= 0 && c0 < c1 &&
	             c1 <= 1e9 && !qrange_on(q);
	int rc;

	memset(out, 0, sizeof *out);
	memset(&s, 0, sizeof s);
	s.q = q;
	s.hook = hook;
	s.hook_ctx = hook_ctx;
	qkeys_init(&s.keys);
	s.by = !strcmp(field, "name")      ? BY_NAME
	       : !strcmp(field, "worker")  ? BY_WORKER
	       : !strcmp(field, "profile") ? BY_PROFILE
	                                   : BY_TID;
	rc = dataset_check_generation(q->ds, q->e);
	if (!rc)
		rc = q_select_profiles(q, &idx, &n);
	if (!rc)
		rc = q_name_needles(q, &nd, &nn);
	for (size_t k = 0; !rc && k < n; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		if (json_is_true(json_object_get(pr, "truncated")))
			out->partial = 1;
		if (nscan_profile(&s, pr, idx[k], nd, nn))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		int have = 0;
		/* whole run by name: the build-time summaries, if any */
		if (!rc && !hook && s.by == BY_NAME && q_whole_run(q) &&
		    !qrange_on(q))
			rc = dataset_run_names(q->ds, (int64_t)idx[k], &have,
			                       on_group_name, &s, q->e);
		else if (!rc && binned && s.by == BY_NAME)
			rc = binned_profile(&s, (int64_t)idx[k], (int64_t)c0,
			                    (int64_t)c1, &have);
		if (!rc && !have)
			rc = qrange_events(q, (int64_t)idx[k], &w,
			                   on_group_event, &s);
		if (s.oom)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		free((void *)s.name_ok);
		free(s.name_group);
		s.name_ok = NULL;
		s.name_group = NULL;
	}
	for (int64_t k = 0; !rc && k < s.keys.count; k++)
		if (qsum_failed(&s.g[k].clipped) || qsum_failed(&s.g[k].duration))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
	q_name_needles_free(nd, nn);
	free(idx);
	out->keys = s.keys;
	out->g = s.g;
	out->cap = s.cap;
	out->n = (size_t)s.keys.count;
	if (rc)
		q_nvtx_groups_free(out);
	return rc;
}

void q_nvtx_groups_free(struct q_nvtx_groups *g)
{
	for (size_t k = 0; k < g->cap; k++)
		qnvtx_free(&g->g[k]);
	free(g->g);
	qkeys_free(&g->keys);
	memset(g, 0, sizeof *g);
}

int q_nvtx_groups_order(struct qctx *q, const struct q_nvtx_groups *gs,
                        int with_sort, size_t **order, struct num **vals)
{
	static const struct qgroup_by def[] = {
		{NV_CLIPPED, 1}, {NV_COUNT, 1}, {QGROUP_KEY, 0}};
	size_t n = gs->n, nsort = 0;
	struct qgroup_by *sort = NULL;
	int rc = 0;

	*vals = calloc((n ? n : 1) * NV_N, sizeof **vals);
	*order = malloc((n ? n : 1) * sizeof **order);
	if (!*vals || !*order)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; !rc && k < n; k++) {
		const struct qnvtx *g = &gs->g[k];
		struct num *v = &(*vals)[k * NV_N];
		v[NV_COUNT] = (struct num){NUM_INT, g->count,
		                           (double)g->count, NULL, 0};
		v[NV_CLIPPED] = (struct num){NUM_REAL, 0,
		                             qsum_value(&g->clipped), NULL, 0};
		v[NV_TOTAL] = (struct num){NUM_REAL, 0,
		                           qsum_value(&g->duration), NULL, 0};
		v[NV_MAX] = (struct num){NUM_REAL, 0, g->max, NULL, 0};
		v[NV_MEAN] = (struct num){NUM_REAL, 0,
		                          v[NV_TOTAL].d / (double)g->count, NULL,
		                          0};
	}
	if (!rc && with_sort)
		rc = sort_spec(q, nsys_keys, &sort, &nsort);
	if (!rc)
		qgroup_order(gs->keys.keys, *vals, NV_N, n,
		             &(struct qgroup_sort){def, sort, 3, nsort}, *order);
	free(sort);
	if (rc) {
		free(*vals);
		free(*order);
		*vals = NULL;
		*order = NULL;
	}
	return rc;
}

void q_nvtx_groups_emit(struct qctx *q, const struct q_nvtx_groups *gs,
                        const size_t *order, const struct num *vals,
                        size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		const struct num *v = &vals[order[k] * NV_N];
		struct qitem it;
		if (k > from)
			buf_putc(q->out, ',');
		qi_begin(&it, q);
		if (qi_key(&it, "key"))
			qkey_emit(q->out, &gs->keys.keys[order[k]]);
		if (qi_key(&it, "count"))
			jsonout_int(q->out, v[NV_COUNT].i);
		if (qi_key(&it, "duration_total"))
			jsonout_real(q->out, v[NV_TOTAL].d);
		if (qi_key(&it, "duration_max"))
			jsonout_real(q->out, v[NV_MAX].d);
		if (qi_key(&it, "duration_mean"))
			jsonout_real(q->out, v[NV_MEAN].d);
		if (qi_key(&it, "clipped_total"))
			jsonout_real(q->out, v[NV_CLIPPED].d);
		qi_end(&it);
	}
}

int query_nsys_grouped(struct qctx *q)
{
	struct q_nvtx_groups gs;
	struct num *vals = NULL;
	size_t *order = NULL, from, to;
	int64_t total = 0;
	int rc = q_nsys_groups(q, q->p->group_by, &gs);

	if (rc)
		return rc;
	rc = q_nvtx_groups_order(q, &gs, 1, &order, &vals);
	if (rc) {
		q_nvtx_groups_free(&gs);
		return rc;
	}
	for (size_t k = 0; k < gs.n; k++)
		total += gs.g[k].count;
	q_page(q, gs.n, &from, &to);
	q_groups_head(q, (size_t)total, gs.n);
	q_nvtx_groups_emit(q, &gs, order, vals, from, to);
	q_list_tail(q);
	group_by_member(q);
	buf_puts(q->out, ",\"attribution\":\"Shared worker/rank activity; "
	                 "overlap does not establish request ownership.\","
	                 "\"partial\":");
	buf_puts(q->out, gs.partial ? "true" : "false");
	q_list_close(q, (size_t)total);
	free(vals);
	free(order);
	q_nvtx_groups_free(&gs);
	return 0;
}

/* ---- requests ---- */

struct rgroup {
	int64_t count;
	struct qobs *ttft, *dur;
	size_t nttft, ndur, capttft, capdur;
	struct qnsum in, out;
};

static int push(struct qobs **v, size_t *n, size_t *cap, struct num x,
                size_t order)
{
	if (vec_reserve(v, cap, *n + 1, sizeof **v))
		return -1;
	(*v)[*n].v = x;
	(*v)[(*n)++].order = order;
	return 0;
}

struct rscan {
	struct qctx *q;
	struct qkeys keys;
	struct rgroup *g;
	size_t cap;
};

static int add_to_group(struct rscan *s, int64_t gi, const json_t *r,
                        size_t order)
{
	struct num ttft = qnum_of(json_object_get(r, "ttft_ms"));
	const json_t *a = json_object_get(r, "start");
	const json_t *b = json_object_get(r, "end");
	struct num in = qnum_of(json_object_get(r, "input_tokens"));
	struct num out = qnum_of(json_object_get(r, "output_tokens"));
	struct rgroup *g;

	if (gi < 0 ||
	    vec_reserve_zero(&s->g, &s->cap, (size_t)gi + 1, sizeof *s->g))
		return -1;
	g = &s->g[gi];
	g->count++;
	if (ttft.kind != NUM_NULL &&
	    push(&g->ttft, &g->nttft, &g->capttft, ttft, order))
		return -1;
	if (json_is_number(a) && json_is_number(b)) {
		struct num d = {NUM_REAL, 0,
		                json_number_value(b) - json_number_value(a), NULL,
		                0};
		if (push(&g->dur, &g->ndur, &g->capdur, d, order))
			return -1;
	}
	qnsum_add(&g->in, &in);
	qnsum_add(&g->out, &out);
	return 0;
}

/* Adds request r (position order among the matches) to its groups. */
static int group_request(struct rscan *s, const char *field, const json_t *r,
                         size_t order)
{
	const json_t *v;
	if (strcmp(field, "worker") != 0) {
		v = json_object_get(r, field);
		return add_to_group(s, json_is_string(v)
		                               ? qkeys_str(&s->keys,
		                                           json_string_value(v),
		                                           json_string_length(v))
		                               : qkeys_null(&s->keys),
		                    r, order);
	}
	{
		const json_t *ws = json_object_get(r, "workers");
		size_t k, any = 0;
		json_array_foreach(ws, k, v) {
			int seen = 0;
			if (!json_is_string(v))
				continue;
			for (size_t j = 0; j < k && !seen; j++) {
				const json_t *u = json_array_get(ws, j);
				seen = json_is_string(u) && json_equal(u, v);
			}
			any = 1;
			if (!seen && add_to_group(s, qkeys_str(&s->keys,
			                                     json_string_value(v),
			                                     json_string_length(v)),
			                          r, order))
				return -1;
		}
		if (!any)
			return add_to_group(s, qkeys_null(&s->keys), r, order);
	}
	return 0;
}

/* q_each_request's fn: request r into its groups, then let go of it. */
static int group_one(void *ctx, const json_t *r, size_t order)
{
	struct rscan *s = ctx;
	if (group_request(s, s->q->p->group_by, r, order))
		return err_set(s->q->e, ERR_NOMEM, "out of memory");
	return 0;
}

static void emit_request_group(struct qctx *q, const struct qkey *key,
                               const struct num *v)
{
	struct qitem it;
	qi_begin(&it, q);
	if (qi_key(&it, "key"))
		qkey_emit(q->out, key);
	if (qi_key(&it, "count"))
		num_emit(q->out, &v[RV_COUNT]);
	if (qi_key(&it, "ttft_ms"))
		qstat_emit(q->out, &v[RV_TTFT]);
	if (qi_key(&it, "duration"))
		qstat_emit(q->out, &v[RV_DUR]);
	if (qi_key(&it, "input_tokens"))
		num_emit(q->out, &v[RV_IN]);
	if (qi_key(&it, "output_tokens"))
		num_emit(q->out, &v[RV_OUT]);
	qi_end(&it);
}

int query_requests_grouped(struct qctx *q)
{
	static const struct qgroup_by def[] = {{RV_COUNT, 1}, {QGROUP_KEY, 0}};
	struct rscan s;
	struct qgroup_by *sort = NULL;
	struct num *vals = NULL;
	size_t *order = NULL, n = 0, ng, nsort, from, to;
	int rc;

	memset(&s, 0, sizeof s);
	s.q = q;
	qkeys_init(&s.keys);
	/* folded as they come: a million requests are never all in memory */
	rc = q_each_request(q, STORE_GROUP, group_one, &s, &n);
	ng = (size_t)s.keys.count;
	if (!rc) {
		vals = calloc((ng ? ng : 1) * RV_N, sizeof *vals);
		order = malloc((ng ? ng : 1) * sizeof *order);
		if (!vals || !order)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
	}
	for (size_t k = 0; !rc && k < ng; k++) {
		struct rgroup *g = &s.g[k];
		struct num *v = &vals[k * RV_N];
		v[RV_COUNT] = (struct num){NUM_INT, g->count, (double)g->count,
		                           NULL, 0};
		v[RV_IN] = qnsum_value(&g->in);
		v[RV_OUT] = qnsum_value(&g->out);
		qobs_sort(g->ttft, g->nttft);
		qstat_compute(g->ttft, g->nttft, &v[RV_TTFT]);
		qobs_sort(g->dur, g->ndur);
		qstat_compute(g->dur, g->ndur, &v[RV_DUR]);
	}
	if (!rc)
		rc = sort_spec(q, requests_keys, &sort, &nsort);
	if (!rc) {
		qgroup_order(s.keys.keys, vals, RV_N, ng,
		             &(struct qgroup_sort){def, sort, 2, nsort}, order);
		q_page(q, ng, &from, &to);
		q_groups_head(q, n, ng);
		for (size_t k = from; k < to; k++) {
			if (k > from)
				buf_putc(q->out, ',');
			emit_request_group(q, &s.keys.keys[order[k]],
			                   &vals[order[k] * RV_N]);
		}
		q_list_tail(q);
		group_by_member(q);
		q_list_close(q, n);
	}
	for (size_t k = 0; k < ng && k < s.cap; k++) {
		free(s.g[k].ttft);
		free(s.g[k].dur);
		qnsum_free(&s.g[k].in);
		qnsum_free(&s.g[k].out);
	}
	free(s.g);
	qkeys_free(&s.keys);
	free(sort);
	free(vals);
	free(order);
	return rc;
}
