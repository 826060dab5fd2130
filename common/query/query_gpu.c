/* query_gpu: the `gpu` kind, GPU rows of Nsight profiles overlapping the
 * window, listed (sorted, paged) or grouped (doc/query-semantics.md
 * "gpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/vec.h"
#include "query/qgroup.h"
#include "query/qkinds.h"

static const char *const kind_names[3] = {"kernel", "memcpy", "memset"};

/* The gpu kind named by gpu_kind (-1: any). */
static int kind_of(const char *gpu_kind)
{
	for (int k = 0; k < 3 && gpu_kind; k++)
		if (!strcmp(gpu_kind, kind_names[k]))
			return k;
	return -1;
}

/* One match; the page's rows are re-read from the scan in a second pass
 * only when shown, so a hit stays small. */
struct hit {
	double start, end, queue; /* queue: NAN when no launch */
	size_t pindex;
	int64_t profile, ordinal;
	const json_t *name;
};

static void hit_value(const void *hit, const char *key, struct qval *v)
{
	const struct hit *h = hit;
	if (!strcmp(key, "start"))
		qval_number(h->start, v);
	else if (!strcmp(key, "duration"))
		qval_number(h->end - h->start, v);
	else if (!strcmp(key, "queue_delay")) {
		if (isnan(h->queue))
			qval_of_json(NULL, v);
		else
			qval_number(h->queue, v);
	} else
		qval_of_json(h->name, v);
}

static int hit_cmp(const struct hit *a, const struct hit *b,
                   const struct qorder *o)
{
	int c = q_keys_cmp(a, b, o, hit_value);
	if (c)
		return c;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->profile != b->profile)
		return a->profile < b->profile ? -1 : 1;
	if (a->pindex != b->pindex)
		return a->pindex < b->pindex ? -1 : 1;
	return a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
}

static int hit_qsort(const void *a, const void *b, void *o)
{
	return hit_cmp(a, b, o);
}

/* Whether o is the default order: none, or start ascending. */
static int start_order(const struct qorder *o)
{
	return o->n == 0 ||
	       (o->n == 1 && !o->keys[0].desc && !strcmp(o->keys[0].name, "start"));
}

/* The scan of one query over the selected profiles. */
struct gscan {
	struct qctx *q;
	const json_t *pr, *names, *nvtx_names;
	size_t pindex;
	int64_t profile;
	unsigned char *name_ok;
	size_t nnames;
	int kind; /* -1 any */
	/* list: the keep smallest hits (top.v: struct hit) */
	struct q_topk top;
	size_t total;
	/* first > 0: the list asks for the default order with no filter but
	 * the window: total comes from a count, and each profile's scan stops
	 * after its first `first` rows in start order (kept counts them) */
	size_t first, kept;
	/* grouped */
	struct q_nvtx_groups *gs;
	/* emit: the ordinal wanted and whether it was written */
	int64_t want;
	int done, oom;
};

/* Whether row passes the filters beyond the window and the profile. */
static int row_ok(const struct gscan *s, const struct row_gpu *row)
{
	const struct query_params *p = s->q->p;
	if (s->kind >= 0 && row->kind != s->kind)
		return 0;
	if (p->has_device && ((row->nulls & (1u << ROW_GPU_DEVICE)) ||
	                      row->v[ROW_GPU_DEVICE] != p->device))
		return 0;
	if (p->has_stream && ((row->nulls & (1u << ROW_GPU_STREAM)) ||
	                      row->v[ROW_GPU_STREAM] != p->stream))
		return 0;
	if (s->name_ok && (row->name < 0 || (uint64_t)row->name >= s->nnames ||
	                   !s->name_ok[row->name]))
		return 0;
	return 1;
}

static int on_list(void *ctx, int64_t ordinal, const struct row_gpu *row,
                   int64_t nvtx_name)
{
	struct gscan *s = ctx;
	struct hit h;
	(void)nvtx_name;
	if (!row_ok(s, row))
		return 0;
	if (s->first && s->kept++ == s->first)
		return 1; /* the profile's first rows are offered */
	if (!s->first)
		s->total++;
	if (!s->top.keep)
		return 0;
	h.start = row->start;
	h.end = row->end;
	h.queue = row->launch_tid ? row->start - row->launch_start : NAN;
	h.pindex = s->pindex;
	h.profile = s->profile;
	h.ordinal = ordinal;
	h.name = json_array_get(s->names, (size_t)row->name);
	if (q_topk_offer(&s->top, &h)) {
		s->oom = 1;
		return 1;
	}
	return 0;
}

/* The group of a row for field f; -1 out of memory. */
static int64_t group_of(struct gscan *s, const char *f,
                        const struct row_gpu *row, int64_t nvtx_name)
{
	struct qkeys *k = &s->gs->keys;
	const json_t *v = NULL;
	if (!strcmp(f, "device") || !strcmp(f, "stream")) {
		int slot = f[0] == 'd' ? ROW_GPU_DEVICE : ROW_GPU_STREAM;
		return row->nulls & (1u << slot) ? qkeys_null(k)
		                                 : qkeys_int(k, row->v[slot]);
	}
	if (!strcmp(f, "gpu_kind"))
		return qkeys_str(k, kind_names[row->kind],
		                 strlen(kind_names[row->kind]));
	if (!strcmp(f, "nvtx"))
		v = nvtx_name >= 0 ? json_array_get(s->nvtx_names,
		                                    (size_t)nvtx_name) : NULL;
	else
		v = json_array_get(s->names, (size_t)row->name);
	if (!json_is_string(v))
		return qkeys_null(k);
	return qkeys_str(k, json_string_value(v), json_string_length(v));
}

static int on_group(void *ctx, int64_t ordinal, const struct row_gpu *row,
                    int64_t nvtx_name)
{
	struct gscan *s = ctx;
	(void)ordinal;
	if (!row_ok(s, row))
		return 0;
	s->total++;
	int64_t g = group_of(s, s->q->p->group_by, row, nvtx_name);
	struct q_nvtx_groups *gs = s->gs;
	if (g < 0 || vec_reserve_zero(&gs->g, &gs->cap, (size_t)g + 1,
	                            sizeof *gs->g)) {
		s->oom = 1;
		return 1;
	}
	while (gs->n <= (size_t)g)
		qnvtx_init(&gs->g[gs->n++]);
	qnvtx_add(&gs->g[g], row->start, row->end, s->q->start, s->q->end);
	return 0;
}

static void put_int(struct buf *b, const struct row_gpu *r, int slot)
{
	if (r->nulls & (1u << slot))
		buf_puts(b, "null");
	else
		jsonout_int(b, r->v[slot]);
}

static void put_triple(struct buf *b, const struct row_gpu *r, int slot)
{
	buf_putc(b, '[');
	for (int i = 0; i < 3; i++) {
		if (i)
			buf_putc(b, ',');
		put_int(b, r, slot + i);
	}
	buf_putc(b, ']');
}

static void put_name(struct buf *b, const json_t *names, int64_t k)
{
	const json_t *v = k >= 0 ? json_array_get(names, (size_t)k) : NULL;
	jsonout_tree(b, v ? v : json_null(), 0);
}

static int on_emit(void *ctx, int64_t ordinal, const struct row_gpu *r,
                   int64_t nvtx_name)
{
	struct gscan *s = ctx;
	struct buf *b = s->q->out;
	struct qitem it;
	if (ordinal != s->want)
		return 0;
	qi_begin(&it, s->q);
	if (qi_key(&it, "profile"))
		jsonout_int(b, s->profile);
	if (qi_key(&it, "worker")) {
		const json_t *w = json_object_get(s->pr, "worker");
		jsonout_tree(b, w ? w : json_null(), 0);
	}
	if (qi_key(&it, "gpu_kind"))
		jsonout_cstr(b, kind_names[r->kind]);
	if (qi_key(&it, "start"))
		jsonout_real(b, r->start);
	if (qi_key(&it, "end"))
		jsonout_real(b, r->end);
	if (qi_key(&it, "duration"))
		jsonout_real(b, r->end - r->start);
	if (qi_key(&it, "device"))
		put_int(b, r, ROW_GPU_DEVICE);
	if (qi_key(&it, "stream"))
		put_int(b, r, ROW_GPU_STREAM);
	if (qi_key(&it, "name"))
		put_name(b, s->names, r->name);
	if (qi_key(&it, "short_name"))
		put_name(b, s->names, r->short_name);
	if (qi_key(&it, "correlation"))
		put_int(b, r, ROW_GPU_CORRELATION);
	if (qi_key(&it, "bytes"))
		put_int(b, r, ROW_GPU_BYTES);
	if (qi_key(&it, "grid"))
		put_triple(b, r, ROW_GPU_GRID_X);
	if (qi_key(&it, "block"))
		put_triple(b, r, ROW_GPU_BLOCK_X);
	if (qi_key(&it, "registers"))
		put_int(b, r, ROW_GPU_REGISTERS);
	if (qi_key(&it, "static_smem"))
		put_int(b, r, ROW_GPU_STATIC_SMEM);
	if (qi_key(&it, "dynamic_smem"))
		put_int(b, r, ROW_GPU_DYNAMIC_SMEM);
	if (qi_key(&it, "graph_node"))
		put_int(b, r, ROW_GPU_GRAPH_NODE);
	if (qi_key(&it, "launch_tid")) {
		if (r->launch_tid)
			jsonout_str(b, r->launch_tid, r->launch_tid_len);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "launch_start")) {
		if (r->launch_tid)
			jsonout_real(b, r->launch_start);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "launch_name"))
		put_name(b, s->names, r->launch_name);
	if (qi_key(&it, "queue_delay")) {
		if (r->launch_tid)
			jsonout_real(b, r->start - r->launch_start);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "nvtx_ordinal")) {
		if (r->nvtx >= 0)
			jsonout_int(b, r->nvtx);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "nvtx_name"))
		put_name(b, s->nvtx_names, nvtx_name);
	if (qi_key(&it, "rowid"))
		jsonout_int(b, r->source_row);
	qi_end(&it);
	s->done = 1;
	return 1;
}

/* Points s at profile idx (its names, name filter). */
static int set_profile(struct gscan *s, const struct q_needle *nd, size_t nn,
                       size_t idx)
{
	const json_t *profiles = q_array(s->q->cat, "profiles");
	s->pr = json_array_get(profiles, idx);
	s->names = json_object_get(s->pr, "gpu_names");
	s->nvtx_names = json_object_get(s->pr, "names");
	s->pindex = idx;
	s->profile = q_id(s->pr, idx);
	free(s->name_ok);
	s->name_ok = NULL;
	if (nd) {
		s->name_ok = q_match_names(s->names, nd, nn);
		s->nnames = json_array_size(s->names);
		if (!s->name_ok)
			return err_set(s->q->e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

static double max_duration(const json_t *pr)
{
	return json_number_value(json_object_get(json_object_get(pr, "gpu"),
	                                         "max_duration"));
}

/* Runs fn over the matching rows of every selected profile; *partial when
 * one of them was truncated. */
static int scan(struct qctx *q, struct gscan *s, store_gpu_fn fn,
                int with_nvtx, int *partial)
{
	struct row_window w = {q->start, q->end, 0};
	struct q_needle *nd = NULL;
	size_t nn = 0, *idx = NULL, n;
	int rc = q_select_profiles(q, &idx, &n);
	if (!rc)
		rc = q_name_needles(q, &nd, &nn);
	s->kind = kind_of(q->p->gpu_kind);
	for (size_t k = 0; k < n && !rc; k++) {
		const json_t *gpu = json_object_get(
			json_array_get(q_array(q->cat, "profiles"), idx[k]), "gpu");
		if (!json_is_object(gpu))
			continue;
		if (json_is_true(json_object_get(gpu, "truncated")))
			*partial = 1;
		if ((rc = set_profile(s, nd, nn, idx[k])) != 0)
			break;
		if (s->first && nn == 0) {
			int64_t cnt = 0;
			if ((rc = dataset_gpu_count(q->ds, (int64_t)idx[k], &w,
			                            max_duration(s->pr), &cnt,
			                            q->e)) != 0)
				break;
			s->total += (size_t)cnt;
			s->kept = 0;
			if (!s->top.keep)
				continue;
		} else {
			s->first = 0; /* a name filter: every row is looked at */
		}
		rc = dataset_gpu_rows(q->ds, (int64_t)idx[k], &w,
		                      max_duration(s->pr), with_nvtx, fn, s, q->e);
		if (rc == 1 && s->first)
			rc = 0; /* stopped after the profile's first rows */
		if (s->oom)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
	}
	free(s->name_ok);
	s->name_ok = NULL;
	q_name_needles_free(nd, nn);
	free(idx);
	return rc;
}

static void tail(struct qctx *q, int partial)
{
	buf_puts(q->out, ",\"attribution\":\"GPU activity of the whole "
	                 "process; overlap does not establish request "
	                 "ownership.\",\"partial\":");
	buf_puts(q->out, partial ? "true" : "false");
}

/* count rows of a summary (their durations' exact sum in parts, the
 * largest max) into group g; ERR_NOMEM (e not filled) when out of memory. */
static int add_part(struct gscan *s, int64_t g, int64_t count,
                    const double *parts, size_t nparts, double max)
{
	struct q_nvtx_groups *gs = s->gs;
	struct qnvtx part;
	if (g < 0 || vec_reserve_zero(&gs->g, &gs->cap, (size_t)g + 1,
	                              sizeof *gs->g))
		return ERR_NOMEM;
	while (gs->n <= (size_t)g)
		qnvtx_init(&gs->g[gs->n++]);
	qnvtx_init(&part);
	part.count = count;
	part.max = max;
	for (size_t i = 0; i < nparts; i++) {
		qsum_add(&part.duration, parts[i]);
		qsum_add(&part.clipped, parts[i]);
	}
	qnvtx_merge(&gs->g[g], &part);
	qnvtx_free(&part);
	s->total += (size_t)count;
	return 0;
}

/* A name summary row of the current profile into its group. */
static int on_sum(void *ctx, int64_t name, int64_t count, const double *parts,
                  size_t nparts, double max)
{
	struct gscan *s = ctx;
	const json_t *v = json_array_get(s->names, (size_t)name);
	struct qkeys *k = &s->gs->keys;
	int64_t g = json_is_string(v) ? qkeys_str(k, json_string_value(v),
	                                          json_string_length(v))
	                              : qkeys_null(k);
	return add_part(s, g, count, parts, nparts, max);
}

static void key_int(struct row_gpu *row, int slot, int64_t v)
{
	if (v == STORE_GPUKEYS_NULL)
		row->nulls |= 1u << slot;
	else
		row->v[slot] = v;
}

/* A key summary row of the current profile into its group, when it
 * passes the filters (as the rows it counts would). */
static int on_key(void *ctx, const struct store_gpukey *key,
                  const double *parts, size_t nparts)
{
	struct gscan *s = ctx;
	struct row_gpu row;
	if (key->kind < 0 || key->kind > 2)
		return err_set(s->q->e, ERR_DATA, "the cache's GPU summary holds"
		               " an unknown kind %lld", (long long)key->kind);
	memset(&row, 0, sizeof row);
	row.kind = (int)key->kind;
	row.name = key->name;
	key_int(&row, ROW_GPU_DEVICE, key->device);
	key_int(&row, ROW_GPU_STREAM, key->stream);
	if (!row_ok(s, &row))
		return 0;
	return add_part(s, group_of(s, s->q->p->group_by, &row,
	                            key->nvtx_name == STORE_GPUKEYS_NULL
	                            ? -1 : key->nvtx_name),
	                key->count, parts, nparts, key->max);
}

/* The rows the summary leaves out (not inside [0, duration]) that overlap
 * the run: those around 0 (start <= 0 <= end), then those around the end
 * starting after 0 (so none twice: a row from exactly 0 across the end
 * is one of the first). */
static int on_boundary(void *ctx, int64_t ordinal, const struct row_gpu *r,
                       int64_t nvtx_name)
{
	struct gscan *s = ctx;
	if (r->start >= 0 && r->end <= s->q->duration)
		return 0;
	if (s->want == 1 && r->start <= 0)
		return 0;
	return on_group(ctx, ordinal, r, nvtx_name);
}

/* A whole-run gpu --group-by from the build-time summaries: by key (any
 * grouping, any device, stream, kind or name filter) when keys, else by
 * name (--group-by name, no filter: caches made before the key summary).
 * *done 0 when it does not apply (a window, another grouping, no
 * summary); s and its groups then hold partial counts to drop. */
static int grouped_from_summary(struct qctx *q, struct gscan *s, int keys,
                                int *partial, int *done)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	const char *f = q->p->group_by;
	struct q_needle *nd = NULL;
	size_t *idx = NULL, n = 0, nn = 0;
	int rc = 0;

	*done = 0;
	if (!q_whole_run(q))
		return 0;
	if (keys ? strcmp(f, "name") && strcmp(f, "device") &&
	           strcmp(f, "stream") && strcmp(f, "gpu_kind") &&
	           strcmp(f, "nvtx")
	         : strcmp(f, "name") || q->p->has_device || q->p->has_stream ||
	           q->p->gpu_kind ||
	           (q->names.on && !(q->names.n == 1 && !*q->names.v[0])))
		return 0;
	if ((rc = q_select_profiles(q, &idx, &n)) != 0 ||
	    (keys && (rc = q_name_needles(q, &nd, &nn)) != 0)) {
		free(idx);
		return rc;
	}
	s->kind = keys ? kind_of(q->p->gpu_kind) : -1;
	for (size_t k = 0; k < n && !rc; k++) {
		const json_t *gpu = json_object_get(json_array_get(profiles, idx[k]),
		                                    "gpu");
		int have = 0;
		if (!json_is_object(gpu))
			continue;
		if (json_is_true(json_object_get(gpu, "truncated")))
			*partial = 1;
		if ((rc = set_profile(s, nd, nn, idx[k])) != 0)
			break;
		rc = keys ? dataset_gpu_sum_keys(q->ds, (int64_t)idx[k],
		                                 q->duration, &have, on_key, s,
		                                 q->e)
		          : dataset_gpu_sum_names(q->ds, (int64_t)idx[k],
		                                  q->duration, &have, on_sum, s,
		                                  q->e);
		if (rc == ERR_NOMEM)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		if (rc || !have)
			break;
		for (int side = 0; side < 2 && !rc; side++) {
			double at = side ? q->duration : 0;
			struct row_window w = {at, at, 0};
			s->want = side;
			rc = dataset_gpu_rows(q->ds, (int64_t)idx[k], &w,
			                      max_duration(s->pr),
			                      !strcmp(f, "nvtx"), on_boundary, s,
			                      q->e);
		}
		if (!rc && s->oom)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		if (!rc && k + 1 == n)
			*done = 1;
	}
	if (n == 0)
		*done = 1;
	free(s->name_ok);
	s->name_ok = NULL;
	q_name_needles_free(nd, nn);
	free(idx);
	return rc;
}

static int gpu_grouped(struct qctx *q)
{
	struct q_nvtx_groups gs;
	struct gscan s;
	struct num *vals = NULL;
	size_t *order = NULL, from, to;
	int partial = 0;

	memset(&gs, 0, sizeof gs);
	memset(&s, 0, sizeof s);
	qkeys_init(&gs.keys);
	s.q = q;
	s.gs = &gs;
	int done = 0, rc = 0;
	/* the key summary, the name summary, then a scan: each from nothing */
	for (int how = 0; !rc && !done && how < 3; how++) {
		q_nvtx_groups_free(&gs);
		memset(&gs, 0, sizeof gs);
		qkeys_init(&gs.keys);
		s.total = 0;
		partial = 0;
		if (how < 2)
			rc = grouped_from_summary(q, &s, how == 0, &partial, &done);
		else
			rc = scan(q, &s, on_group, !strcmp(q->p->group_by, "nvtx"),
			          &partial);
	}
	gs.partial = partial;
	if (!rc)
		rc = q_nvtx_groups_order(q, &gs, 1, &order, &vals);
	if (rc) {
		q_nvtx_groups_free(&gs);
		return rc;
	}
	q_page(q, gs.n, &from, &to);
	q_groups_head(q, s.total, gs.n);
	q_nvtx_groups_emit(q, &gs, order, vals, from, to);
	q_list_tail(q);
	buf_puts(q->out, ",\"group_by\":");
	jsonout_cstr(q->out, q->p->group_by);
	tail(q, partial);
	q_list_close(q, s.total);
	free(vals);
	free(order);
	q_nvtx_groups_free(&gs);
	return 0;
}

int query_gpu(struct qctx *q)
{
	struct gscan s;
	size_t from, to;
	int partial = 0, rc;

	if ((rc = dataset_check_generation(q->ds, q->e)) != 0)
		return rc;
	if (q->p->group_by)
		return gpu_grouped(q);
	memset(&s, 0, sizeof s);
	s.q = q;
	q_topk_init(&s.top, sizeof(struct hit), q->p->limit ? (size_t)q->p->offset
	            + (size_t)q->p->limit : 0, hit_qsort, (void *)&q->order);
	/* the default order (start, profile, ordinal) is each profile's scan
	 * order: with no filter but the window, its first offset + limit rows
	 * are all a page can take from it */
	if (start_order(&q->order) && !q->p->gpu_kind && !q->p->has_device &&
	    !q->p->has_stream)
		s.first = q->p->limit ? (size_t)q->p->offset + (size_t)q->p->limit
		                      : (size_t)-1;
	if ((rc = scan(q, &s, on_list, 0, &partial)) != 0) {
		q_topk_free(&s.top);
		return rc;
	}
	q_topk_sort(&s.top);
	const struct hit *heap = s.top.v;
	q_page(q, s.total, &from, &to);
	if (to > s.top.n)
		to = s.top.n;
	q_list_head(q, s.total);
	const json_t *profiles = q_array(q->cat, "profiles");
	for (size_t k = from; k < to && !rc; k++) {
		const struct hit *h = &heap[k];
		struct row_window w = {h->start, h->start, 0};
		if (k > from)
			buf_putc(q->out, ',');
		s.pr = json_array_get(profiles, h->pindex);
		s.names = json_object_get(s.pr, "gpu_names");
		s.nvtx_names = json_object_get(s.pr, "names");
		s.profile = h->profile;
		s.want = h->ordinal;
		s.done = 0;
		rc = dataset_gpu_rows(q->ds, (int64_t)h->pindex, &w,
		                      max_duration(s.pr), 1, on_emit, &s, q->e);
		if (rc == 1)
			rc = 0;
		if (!rc && !s.done)
			rc = err_set(q->e, ERR_DATA, "GPU row %lld of profile %lld "
			             "vanished while reading", (long long)h->ordinal,
			             (long long)h->profile);
	}
	q_topk_free(&s.top);
	if (rc)
		return rc;
	q_list_tail(q);
	tail(q, partial);
	q_list_close(q, s.total);
	return 0;
}
