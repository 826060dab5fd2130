/* query_catalog: the kinds answered from the catalog tree alone: summary,
 * request, lifecycle, requests, server_spans, sources, sessions, workers,
 * families, iterations, profiles (doc/query-semantics.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qcoll.h"
#include "query/qkinds.h"
#include "query/qnotes.h"
#include "base/text.h"
#include "base/vec.h"

static void emit_member(struct buf *b, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	if (v)
		jsonout_tree(b, v, 0);
	else
		buf_puts(b, "null");
}

int query_summary(struct qctx *q)
{
	static const char *const top[] = {"schema", "meta", "audit",
	                                  "capabilities"};
	static const char *const counted[] = {"requests", "sessions", "workers",
	                                      "metrics", "profiles",
	                                      "iterations"};
	struct buf *b = q->out;

	buf_putc(b, '{');
	for (size_t k = 0; k < 4; k++) {
		jsonout_cstr(b, top[k]);
		buf_putc(b, ':');
		emit_member(b, q->cat, top[k]);
		buf_putc(b, ',');
	}
	buf_puts(b, "\"counts\":{");
	for (size_t k = 0; k < 6; k++) {
		if (k)
			buf_putc(b, ',');
		jsonout_cstr(b, counted[k]);
		buf_putc(b, ':');
		jsonout_int(b, k == 0 ? dataset_count(q->ds, EVIDENCE_REQUESTS) :
		               k == 1 ? dataset_count(q->ds, EVIDENCE_SESSIONS) :
		               k == 5 ? dataset_count(q->ds, EVIDENCE_ITERATIONS) :
		               (int64_t)json_array_size(q_array(q->cat, counted[k])));
	}
	buf_puts(b, "}}");
	return 0;
}

int query_request(struct qctx *q, int lifecycle_only)
{
	json_t *r = NULL;
	int rc;

	if (!q->p->request_id)
		return err_set(q->e, ERR_USAGE, "%s requires a request id "
		               "(--request ID)", lifecycle_only ? "lifecycle" :
		               "request");
	if ((rc = dataset_find_request(q->ds, q->p->request_id, &r, q->e)))
		return rc;
	if (r) {
		if (lifecycle_only)
			rc = qnotes_lifecycle(q, r);
		else
			jsonout_tree(q->out, r, 0);
		json_decref(r);
		return rc;
	}
	return err_set(q->e, ERR_USAGE, "Unknown client request: %s",
	               q->p->request_id);
}

/* ---- requests ---- */

struct search {
	char *needle;
	size_t len;
};

static int str_matches(const json_t *v, const struct search *s)
{
	return json_is_string(v) &&
	       text_contains(json_string_value(v), json_string_length(v),
	                     s->needle, s->len);
}

static int any_matches(const json_t *arr, const struct search *s)
{
	size_t k;
	const json_t *v;
	json_array_foreach(arr, k, v) {
		if (str_matches(v, s))
			return 1;
	}
	return 0;
}

static int keep_request(struct qctx *q, const json_t *r, void *arg)
{
	const struct query_params *p = q->p;
	const struct search *s = arg;
	const json_t *ttft;
	double t = 0;

	if (!json_is_object(r) || !q_overlaps(q, r, "start", "end"))
		return 0;
	if (!q_field_in(&q->sessions, r, "session") ||
	    !q_field_in(&q->agents, r, "agent") ||
	    !q_any_in(&q->workers, json_object_get(r, "workers")))
		return 0;
	ttft = json_object_get(r, "ttft_ms");
	if (json_is_number(ttft))
		t = json_number_value(ttft);
	if (!(t >= p->min_ttft_ms))
		return 0;
	if (s) {
		if (!str_matches(json_object_get(r, "id"), s) &&
		    !str_matches(json_object_get(r, "session"), s) &&
		    !str_matches(json_object_get(r, "agent"), s) &&
		    !str_matches(json_object_get(r, "conversation"), s) &&
		    !any_matches(json_object_get(r, "server_ids"), s) &&
		    !any_matches(json_object_get(r, "workers"), s))
			return 0;
	}
	return 1;
}

struct gather {
	struct qctx *q;
	const json_t **el;
	size_t n, cap;
};

/* The lowercased search text into s (NULL without one): 0 or ERR_NOMEM. */
static int search_init(struct qctx *q, struct search *s)
{
	s->needle = NULL;
	s->len = 0;
	if (!q_given(q->p->search))
		return 0;
	s->needle = text_lower(q->p->search, strlen(q->p->search), &s->len);
	return s->needle ? 0 : err_set(q->e, ERR_NOMEM, "out of memory");
}

/* The backend selection of the requests filters (no sort, no page) whose
 * elements have this shape; s->needle is borrowed. */
static struct store_select request_select(struct qctx *q,
                                          const struct search *s,
                                          enum store_shape shape)
{
	struct store_select sel;

	memset(&sel, 0, sizeof sel);
	sel.sessions = qcoll_strs(&q->sessions);
	sel.agents = qcoll_strs(&q->agents);
	sel.workers = qcoll_strs(&q->workers);
	sel.min_ttft_ms = q->p->min_ttft_ms;
	sel.needle = s->needle;
	sel.needle_len = s->len;
	sel.shape = shape;
	return sel;
}

/* q_each_request's walk: fn on every request kept, numbered in order. */
struct each {
	struct qctx *q;
	const struct search *s;
	q_request_fn fn;
	void *ctx;
	size_t n;
};

static int each_kept(void *ctx, const json_t *r, size_t index)
{
	struct each *x = ctx;
	(void)index;
	return keep_request(x->q, r, (void *)x->s) ? x->fn(x->ctx, r, x->n++)
	                                          : 0;
}

/* A request the backend selected: it passed every filter already. */
static int each_selected(void *ctx, int64_t ordinal, const json_t *r)
{
	struct each *x = ctx;
	(void)ordinal;
	return x->fn(x->ctx, r, x->n++);
}

int q_each_request(struct qctx *q, enum store_shape shape, q_request_fn fn,
                   void *ctx, size_t *n)
{
	struct search s = {NULL, 0};
	struct each x = {q, NULL, fn, ctx, 0};
	struct store_select sel;
	int64_t total;
	int rc;

	*n = 0;
	if (search_init(q, &s))
		return q->e->code;
	if (s.needle)
		x.s = &s;
	/* the backend's filters first: it parses only what matches, without
	 * spans and lifecycle (it answers DATASET_FALLBACK before calling fn
	 * at all, or not at all) */
	sel = request_select(q, &s, shape);
	sel.start = q->start;
	sel.end = q->end;
	sel.limit = INT64_MAX;
	rc = dataset_select(q->ds, EVIDENCE_REQUESTS, &sel, &total, NULL,
	                    each_selected, &x, q->e);
	if (rc == DATASET_FALLBACK)
		rc = q_request_foreach(q, each_kept, &x);
	free(s.needle);
	*n = x.n;
	return rc;
}

/* Keeps a request for the rest of the query (q->held): the element passed
 * may live only during the call.  g->el grows with the rows: the report's
 * count.requests is a hint, never a size. */
static int hold_request(void *ctx, const json_t *r, size_t order)
{
	struct gather *g = ctx;
	(void)order;
	if (!g->q->held)
		g->q->held = json_array();
	if (!g->q->held || json_array_append(g->q->held, (json_t *)r) ||
	    vec_reserve(&g->el, &g->cap, g->n + 1, sizeof *g->el))
		return err_set(g->q->e, ERR_NOMEM, "out of memory");
	g->el[g->n++] = r;
	return 0;
}

int q_match_requests(struct qctx *q, enum store_shape shape,
                     const json_t ***el, size_t *n)
{
	struct gather g = {q, NULL, 0, 0};
	size_t kept;
	int rc;

	*el = NULL;
	*n = 0;
	rc = q_each_request(q, shape, hold_request, &g, &kept);
	if (!rc && !g.el)
		g.el = malloc(sizeof *g.el); /* callers free a non-NULL array */
	if (!rc && !g.el)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	*el = g.el;
	*n = g.n;
	return rc;
}

static void emit_request_item(struct qctx *q, const json_t *r)
{
	static const char *const skip[] = {"spans", "lifecycle", NULL};
	struct qitem it;
	qi_begin(&it, q);
	qi_members(&it, r, skip);
	if (qi_key(&it, "span_count"))
		jsonout_int(q->out, (int64_t)json_array_size(
		                            json_object_get(r, "spans")));
	qi_end(&it);
}

/* The requests the backend selects itself (filters, sort and page in
 * SQL), DATASET_FALLBACK when it cannot. */
static int requests_backend(struct qctx *q)
{
	struct search s = {NULL, 0};
	struct store_select sel;
	size_t total;
	int rc;

	if (search_init(q, &s))
		return q->e->code;
	/* emit_request_item prints neither spans nor lifecycle */
	sel = request_select(q, &s, STORE_SLIM);
	rc = qcoll_backend(q, EVIDENCE_REQUESTS, &sel, NULL, emit_request_item,
	                  &total);
	free(s.needle);
	if (!rc)
		q_list_close(q, total);
	return rc;
}

int query_requests(struct qctx *q)
{
	const json_t **el;
	size_t n;
	int rc;

	rc = requests_backend(q);
	if (rc != DATASET_FALLBACK)
		return rc;
	rc = q_match_requests(q, STORE_WHOLE, &el, &n);
	if (rc) {
		free(el);
		return rc;
	}
	return qcoll_sorted(q, el, n, emit_request_item);
}

/* ---- server_spans, sources, sessions, workers ---- */

static int keep_overlap(struct qctx *q, const json_t *v, void *arg)
{
	(void)arg;
	return json_is_object(v) && q_overlaps(q, v, "start", "end");
}

static int keep_all(struct qctx *q, const json_t *v, void *arg)
{
	(void)q;
	(void)v;
	(void)arg;
	return 1;
}

int query_server_spans(struct qctx *q)
{
	struct store_select sel;
	memset(&sel, 0, sizeof sel);
	return qcoll_list(q, EVIDENCE_SERVER_SPANS, &sel, keep_overlap);
}

int query_sources(struct qctx *q)
{
	return qcoll_plain(q, q_array(q->cat, "sources"), keep_all, NULL);
}

static int keep_session(struct qctx *q, const json_t *v, void *arg)
{
	(void)arg;
	if (!json_is_object(v) || !q_overlaps(q, v, "start", "end"))
		return 0;
	return q_any_in(&q->agents, json_object_get(v, "agents")) &&
	       q_field_in(&q->sessions, v, "id");
}

int query_sessions(struct qctx *q)
{
	struct store_select sel;
	memset(&sel, 0, sizeof sel);
	sel.sessions = qcoll_strs(&q->sessions);
	sel.agents = qcoll_strs(&q->agents);
	return qcoll_list(q, EVIDENCE_SESSIONS, &sel, keep_session);
}

static int keep_worker(struct qctx *q, const json_t *v, void *arg)
{
	(void)arg;
	return q_field_in(&q->workers, v, "id");
}

int query_workers(struct qctx *q)
{
	return qcoll_plain(q, q_array(q->cat, "workers"), keep_worker, NULL);
}

/* ---- families ---- */

/* The lowercased needles of the name filter (none: no filter). */
struct needles {
	struct search *v;
	size_t n;
};

static int needles_make(struct qctx *q, struct needles *nd)
{
	nd->n = 0;
	nd->v = NULL;
	if (!q->names.on || (q->names.n == 1 && !*q->names.v[0]))
		return 0;
	nd->v = calloc(q->names.n, sizeof *nd->v);
	if (!nd->v)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (; nd->n < q->names.n; nd->n++) {
		const char *s = q->names.v[nd->n];
		nd->v[nd->n].needle = text_lower(s, strlen(s), &nd->v[nd->n].len);
		if (!nd->v[nd->n].needle)
			return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

static void needles_free(struct needles *nd)
{
	for (size_t k = 0; k < nd->n; k++)
		free(nd->v[k].needle);
	free(nd->v);
}

static int needles_match(const struct needles *nd, const char *s, size_t len)
{
	if (!nd->v)
		return 1;
	for (size_t k = 0; k < nd->n; k++)
		if (text_contains(s, len, nd->v[k].needle, nd->v[k].len))
			return 1;
	return 0;
}

static int keep_family(struct qctx *q, const json_t *v, void *arg)
{
	const json_t *name = json_object_get(v, "name");
	const struct needles *nd = arg;
	(void)q;
	if (!nd->v)
		return 1;
	return json_is_string(name) &&
	       needles_match(nd, json_string_value(name),
	                     json_string_length(name));
}

struct fam {
	const char *name;
	size_t len;
	int64_t count;
};

static int cmp_fam(const void *a, const void *b)
{
	const struct fam *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Without a stored catalog: one {"name", "series_count"} per distinct
 * series name, in name order. */
static int derived_families(struct qctx *q, const struct needles *nd)
{
	const json_t *series = q_array(q->cat, "metrics"), *v;
	size_t n = 0, m = 0, k, from, to;
	struct fam *f = malloc((json_array_size(series) + 1) * sizeof *f);

	if (!f)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(series, k, v) {
		const json_t *name = json_object_get(v, "name");
		if (!json_is_string(name))
			continue;
		f[n].name = json_string_value(name);
		f[n].len = json_string_length(name);
		f[n].count = 1;
		n++;
	}
	qsort(f, n, sizeof *f, cmp_fam);
	for (k = 0; k < n; k++) {
		if (m && !cmp_fam(&f[m - 1], &f[k])) {
			f[m - 1].count++;
			continue;
		}
		f[m++] = f[k];
	}
	n = 0;
	for (k = 0; k < m; k++)
		if (needles_match(nd, f[k].name, f[k].len))
			f[n++] = f[k];
	q_page(q, n, &from, &to);
	q_list_head(q, n);
	for (k = from; k < to; k++) {
		struct qitem it;
		if (k > from)
			buf_putc(q->out, ',');
		qi_begin(&it, q);
		if (qi_key(&it, "name"))
			jsonout_str(q->out, f[k].name, f[k].len);
		if (qi_key(&it, "series_count"))
			jsonout_int(q->out, f[k].count);
		qi_end(&it);
	}
	q_list_tail(q);
	q_list_close(q, n);
	free(f);
	return 0;
}

int query_families(struct qctx *q)
{
	const json_t *cat = q_array(q->cat, "metric_catalog");
	struct needles nd;
	int rc = needles_make(q, &nd);

	if (!rc && json_array_size(cat)) /* an empty catalog counts as none */
		rc = qcoll_plain(q, cat, keep_family, &nd);
	else if (!rc)
		rc = derived_families(q, &nd);
	needles_free(&nd);
	return rc;
}

/* ---- iterations ---- */

static int iteration_rank_ok(const struct qctx *q, const json_t *row)
{
	if (!q->p->has_rank)
		return 1;
	if (!json_object_get(row, "rank_kind"))
		return q_int_eq(json_object_get(row, "global_rank"), q->p->rank);
	return q_int_eq(json_object_get(row, "rank"), q->p->rank);
}

/* Counts the filtered rows with a null start (in *arg) and keeps the
 * aligned ones that overlap the window. */
static int keep_iteration(struct qctx *q, const json_t *row, void *arg)
{
	int64_t *unaligned = arg;
	const json_t *start;
	int ok;
	double a, b;

	if (!json_is_object(row))
		return 0;
	if (!q_field_in(&q->workers, row, "worker"))
		return 0;
	if (!iteration_rank_ok(q, row))
		return 0;
	start = json_object_get(row, "start");
	if (!start || json_is_null(start)) {
		(*unaligned)++;
		return 0;
	}
	a = q_number(row, "start", &ok);
	if (!ok)
		return 0;
	b = q_number(row, "end", &ok);
	if (!ok)
		b = a;
	return a <= q->end && b >= q->start;
}

int query_iterations(struct qctx *q)
{
	struct store_select sel;
	struct qcoll_kept k;
	size_t total;
	int64_t unaligned = 0;
	int rc;

	memset(&sel, 0, sizeof sel);
	memset(&k, 0, sizeof k);
	sel.workers = qcoll_strs(&q->workers);
	sel.has_rank = q->p->has_rank;
	sel.rank = q->p->rank;
	rc = qcoll_backend(q, EVIDENCE_ITERATIONS, &sel, &unaligned, qcoll_emit_object,
	                  &total);
	if (rc == DATASET_FALLBACK) {
		unaligned = 0;
		rc = qcoll_gather(q, EVIDENCE_ITERATIONS, keep_iteration,
		                  &unaligned, &k);
		if (rc) {
			qcoll_kept_free(&k);
			return rc;
		}
		total = k.n;
		qcoll_emit_page(q, k.el, k.n, qcoll_emit_object);
	}
	qcoll_kept_free(&k);
	if (rc)
		return rc;
	buf_puts(q->out, ",\"unaligned_rows\":");
	jsonout_int(q->out, unaligned);
	buf_puts(q->out, ",\"attribution\":\"Shared batch observations with "
	                 "recorded timestamp precision and rank scope; not "
	                 "per-request execution time.\"");
	q_list_close(q, total);
	return 0;
}

/* ---- profiles ---- */

int query_profiles(struct qctx *q)
{
	/* the name dictionary only when --fields asks for it */
	static const char *const lean[] = {"events", "names", "cpu",
	                                   "event_count", "name_definitions",
	                                   "gpu_names", NULL};
	static const char *const full[] = {"events", "names", "cpu",
	                                   "event_count", "gpu_names", NULL};
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t *idx, n, from, to;
	int rc = q_select_profiles(q, &idx, &n);
	const char *const *skip = lean;

	for (size_t k = 0; k < q->p->fields.n; k++)
		if (!strcmp(q->p->fields.v[k], "name_definitions"))
			skip = full;

	if (rc)
		return rc;
	q_page(q, n, &from, &to);
	q_list_head(q, n);
	for (size_t k = from; k < to; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		const json_t *ec = json_object_get(pr, "event_count");
		const json_t *cpu = json_object_get(pr, "cpu");
		const json_t *sc = json_object_get(cpu, "sample_count");
		struct qitem it;
		if (k > from)
			buf_putc(q->out, ',');
		qi_begin(&it, q);
		qi_members(&it, pr, skip);
		if (qi_key(&it, "event_count")) {
			if (json_is_integer(ec))
				jsonout_int(q->out, (int64_t)json_integer_value(ec));
			else
				jsonout_int(q->out,
				            (int64_t)json_array_size(
				                    json_object_get(pr, "events")));
		}
		if (qi_key(&it, "cpu_samples")) {
			if (json_is_integer(sc))
				jsonout_int(q->out, (int64_t)json_integer_value(sc));
			else
				jsonout_int(q->out,
				            (int64_t)json_array_size(
				                    json_object_get(cpu, "samples")));
		}
		qi_end(&it);
	}
	q_list_tail(q);
	q_list_close(q, n);
	free(idx);
	return 0;
}
