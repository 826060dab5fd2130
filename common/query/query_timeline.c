/* query_timeline: the timeline kind: time buckets over the window of
 * requests, NVTX ranges, CPU samples or metric points
 * (doc/query-semantics.md "timeline"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/text.h"
#include "query/qbucket.h"
#include "query/qstat.h"
#include "query/qjoin.h"
#include "query/qkinds.h"

static const char *const sources[] = {"requests", "nsys", "cpu", "metrics",
                                      NULL};

int q_timeline_check(struct qctx *q)
{
	const struct query_params *p = q->p;
	const char *of = p->of ? p->of : "requests";
	int rc, known = 0;

	if (!p->has_bucket || !isfinite(p->bucket) || !(p->bucket > 0))
		return err_set(q->e, ERR_USAGE,
		               "timeline needs --bucket SECONDS > 0");
	/* without a join the window is known: count the buckets now */
	if (!(p->request_id && qjoin_applies(q->kind)) &&
	    (rc = q_timeline_count(q)))
		return rc;
	for (size_t k = 0; sources[k]; k++)
		known |= !strcmp(sources[k], of);
	if (!known)
		return err_set(q->e, ERR_USAGE,
		               "Unknown timeline source '%s'; choose from "
		               "requests, nsys, cpu, metrics",
		               of);
	return 0;
}

int q_timeline_count(struct qctx *q)
{
	struct qbucket bk;
	int rc = qbucket_init(&bk, q->start, q->end, q->p->bucket);
	qbucket_free(&bk);
	if (rc == 1)
		return err_set(q->e, ERR_USAGE,
		               "Too many buckets; the most is %d", QBUCKET_MAX);
	if (rc)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	return 0;
}

/* min / max of a bucket: the number, its big digits copied. */
struct held {
	struct num v;
	char *big;
};

/* One values array through the item (--fields picks the keys of values):
 * `"name":[e(0),...,e(n-1)]`, nothing when the key is left out. */
struct elems {
	const int64_t *ints;      /* integers */
	const struct qsum *sums;  /* sums, or sums / div when div is set */
	const double *div;        /* null where div is 0 or not finite */
	const struct held *held;  /* numbers, null where ints (samples) is 0 */
};

static void elem(struct buf *b, const struct elems *e, size_t i)
{
	double v;
	if (e->held) {
		if (e->ints[i])
			num_emit(b, &e->held[i].v);
		else
			buf_puts(b, "null");
	} else if (e->ints) {
		jsonout_int(b, e->ints[i]);
	} else if (!e->div) {
		jsonout_real(b, qsum_value(&e->sums[i]));
	} else {
		v = e->div[i] > 0 ? qsum_value(&e->sums[i]) / e->div[i] : NAN;
		if (isfinite(v))
			jsonout_real(b, v);
		else
			buf_puts(b, "null");
	}
}

static void values_array(struct qitem *it, const char *name, size_t n,
                         struct elems e)
{
	if (!qi_key(it, name))
		return;
	buf_putc(it->b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(it->b, ',');
		elem(it->b, &e, i);
	}
	buf_putc(it->b, ']');
}

static void int_array(struct qitem *it, const char *name, const int64_t *v,
                      size_t n)
{
	values_array(it, name, n, (struct elems){v, NULL, NULL, NULL});
}

/* sums[i] / div[i] (div a count or a length); null where div is 0 or the
 * quotient is not finite. */
static void quotient_array(struct qitem *it, const char *name,
                           const struct qsum *sums, const double *div,
                           size_t n)
{
	values_array(it, name, n, (struct elems){NULL, sums, div, NULL});
}

static void sum_array(struct qitem *it, const char *name,
                      const struct qsum *sums, size_t n)
{
	values_array(it, name, n, (struct elems){NULL, sums, NULL, NULL});
}

static struct qsum *new_sums(size_t n)
{
	return calloc(n ? n : 1, sizeof(struct qsum));
}

static void free_sums(struct qsum *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		qsum_free(&s[i]);
	free(s);
}

static int sums_failed(const struct qsum *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (qsum_failed(&s[i]))
			return 1;
	return 0;
}

/* `"total":T,"offset":O,"limit":L,"series":[` once the number of series
 * is known, before the first series. */
static void series_head(struct qctx *q, size_t total, size_t *out)
{
	*out = total;
	buf_puts(q->out, "\"total\":");
	jsonout_int(q->out, (int64_t)total);
	buf_puts(q->out, ",\"offset\":");
	jsonout_int(q->out, q->p->offset);
	buf_puts(q->out, ",\"limit\":");
	jsonout_int(q->out, q->p->limit);
	buf_puts(q->out, ",\"series\":[");
}

/* `{"key":` + key, `,"values":` and the values item begun. */
static void series_open(struct qctx *q, struct qitem *it)
{
	buf_puts(q->out, ",\"values\":");
	qi_begin(it, q);
}

static void series_close(struct qitem *it)
{
	qi_end(it);
	buf_putc(it->b, '}');
}

/* ---- requests ---- */

static int number(const json_t *r, const char *key, double *out)
{
	const json_t *v = json_object_get(r, key);
	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}

static int requests_series(struct qctx *q, const struct qbucket *bk)
{
	const json_t **el = NULL;
	size_t n = bk->n, nr = 0;
	int64_t *cnt = calloc(3 * (n ? n : 1), sizeof *cnt);
	int64_t *arr = cnt, *done = cnt + n, *first = cnt + 2 * n;
	struct qsum *flight = new_sums(n), *ttft = new_sums(n);
	double *len = calloc(n ? n : 1, sizeof *len);
	double *nttft = calloc(n ? n : 1, sizeof *nttft);
	int rc = 0;

	if (!cnt || !flight || !ttft || !len || !nttft)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc)
		rc = q_match_requests(q, &el, &nr);
	for (size_t k = 0; !rc && k < nr; k++) {
		const json_t *r = el[k];
		double a, z, f, t;
		long i;
		if (!number(r, "start", &a) || !number(r, "end", &z))
			continue;
		if ((i = qbucket_find(bk, a)) >= 0) {
			arr[i]++;
			if (number(r, "ttft_ms", &t)) {
				nttft[i] += 1;
				qsum_add(&ttft[i], t);
			}
		}
		if ((i = qbucket_find(bk, z)) >= 0)
			done[i]++;
		if (number(r, "first", &f) && (i = qbucket_find(bk, f)) >= 0)
			first[i]++;
		for (size_t j = qbucket_first_overlap(bk, a, z);
		     j < n && bk->b[j] <= z; j++) {
			double lo = a > bk->b[j] ? a : bk->b[j];
			double hi = z < bk->b[j + 1] ? z : bk->b[j + 1];
			if (hi > lo) /* a request never counts negative time */
				qsum_add(&flight[j], hi - lo);
		}
	}
	if (!rc && (sums_failed(flight, n) || sums_failed(ttft, n)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		struct qitem it;
		for (size_t i = 0; i < n; i++)
			len[i] = qbucket_length(bk, i);
		buf_puts(q->out, "{\"key\":null");
		series_open(q, &it);
		int_array(&it, "arrivals", arr, n);
		int_array(&it, "completions", done, n);
		int_array(&it, "first_tokens", first, n);
		quotient_array(&it, "in_flight", flight, len, n);
		quotient_array(&it, "ttft_ms_mean", ttft, nttft, n);
		series_close(&it);
	}
	free(el);
	free(cnt);
	free_sums(flight, n);
	free_sums(ttft, n);
	free(len);
	free(nttft);
	return rc;
}

/* ---- nsys ---- */

/* Per-bucket cells of one or more series. */
struct cells {
	const struct qbucket *bk;
	int64_t *count;    /* nseries * n */
	struct qsum *active;
	size_t nseries;
	/* the current profile: name index -> series slot (-1: none); NULL =
	 * every row goes to slot 0 */
	const int64_t *slot_of_name;
	size_t nnames;
	const unsigned char *name_ok; /* NULL: no name filter */
};

/* Adds range row to the buckets it overlaps in series slot. */
static void add_range(struct cells *c, size_t slot,
                      const struct row_event *row)
{
	const struct qbucket *bk = c->bk;
	size_t n = bk->n;
	for (size_t j = qbucket_first_overlap(bk, row->start, row->end);
	     j < n && bk->b[j] <= row->end; j++) {
		double lo = row->start > bk->b[j] ? row->start : bk->b[j];
		double hi = row->end < bk->b[j + 1] ? row->end : bk->b[j + 1];
		c->count[slot * n + j]++;
		qsum_add(&c->active[slot * n + j], hi - lo);
	}
}

static int on_range(void *ctx, int64_t ordinal,
                    const struct row_event *row)
{
	struct cells *c = ctx;
	int in_dict = row->name >= 0 && (uint64_t)row->name < c->nnames;
	size_t slot = 0;

	(void)ordinal;
	if (c->name_ok && (!in_dict || !c->name_ok[row->name]))
		return 0;
	if (c->slot_of_name) {
		int64_t s = in_dict ? c->slot_of_name[row->name]
		                    : c->slot_of_name[c->nnames];
		if (s < 0)
			return 0;
		slot = (size_t)s;
	}
	add_range(c, slot, row);
	return 0;
}

/* q_nsys_groups_hook: a matching row of group (= its cells' slot). */
static int on_grouped_range(void *ctx, int64_t group,
                            const struct row_event *row)
{
	struct cells *c = ctx;
	if (group < 0 || (size_t)group >= c->nseries)
		return 0; /* cannot happen: slots cover every possible name */
	add_range(c, (size_t)group, row);
	return 0;
}

static void emit_cells(struct qctx *q, const struct cells *c, size_t slot)
{
	size_t n = c->bk->n;
	struct qitem it;
	series_open(q, &it);
	int_array(&it, "overlapping", &c->count[slot * n], n);
	sum_array(&it, "active", &c->active[slot * n], n);
	series_close(&it);
}

static int cells_init(struct qctx *q, struct cells *c,
                      const struct qbucket *bk, size_t nseries)
{
	memset(c, 0, sizeof *c);
	c->bk = bk;
	c->nseries = nseries;
	c->count = calloc(nseries * bk->n + 1, sizeof *c->count);
	c->active = new_sums(nseries * bk->n);
	if (!c->count || !c->active)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	return 0;
}

static void cells_free(struct cells *c)
{
	free(c->count);
	free_sums(c->active, c->nseries * c->bk->n);
}


/* One series per selected profile. */
static int nsys_by_profile(struct qctx *q, const struct qbucket *bk,
                           size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct dataset_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	size_t *idx = NULL, n = 0, from, to, nn = 0;
	struct q_needle *nd = NULL;
	int rc = q_name_needles(q, &nd, &nn);

	if (!rc)
		rc = q_select_profiles(q, &idx, &n);
	if (!rc)
		series_head(q, n, total);
	q_page(q, n, &from, &to);
	for (size_t k = from; !rc && k < to; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		const json_t *names = json_object_get(pr, "names");
		unsigned char *ok = NULL;
		struct cells c;
		rc = cells_init(q, &c, bk, 1);
		c.nnames = json_array_size(names);
		if (!rc && nd && !(ok = q_match_names(names, nd, nn)))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		c.name_ok = ok;
		if (!rc)
			rc = dataset_events(q->ds, (int64_t)idx[k], &w, on_range,
			                    &c, q->e);
		if (!rc && sums_failed(c.active, bk->n))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			jsonout_int(q->out, q_id(pr, idx[k]));
			emit_cells(q, &c, 0);
		}
		free(ok);
		cells_free(&c);
	}
	free(idx);
	q_name_needles_free(nd, nn);
	return rc;
}

/* Cells for at most this many (series x bucket) at once: a page of names
 * over many buckets is computed in chunks of names. */
#define CELLS_MAX ((size_t)1 << 20)

/* One series per name, names ranked by time inside the window. */
/* nsys_by_name in one scan, when the cells of every name the selected
 * profiles can hold fit CELLS_MAX: the groups and their buckets together.
 * *done 0 (nothing written) when they do not fit. */
static int by_name_one_scan(struct qctx *q, const struct qbucket *bk,
                            size_t *total, int *done)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct q_nvtx_groups gs;
	struct num *vals = NULL;
	size_t *order = NULL, *idx = NULL, np = 0, bound = 1, from, to;
	struct cells c;
	int rc = q_select_profiles(q, &idx, &np);

	*done = 0;
	for (size_t k = 0; !rc && k < np; k++)
		bound += json_array_size(json_object_get(
			json_array_get(profiles, idx[k]), "names"));
	free(idx);
	if (rc || bound > CELLS_MAX / bk->n)
		return rc;
	*done = 1;
	rc = cells_init(q, &c, bk, bound);
	if (!rc)
		rc = q_nsys_groups_hook(q, "name", on_grouped_range, &c, &gs);
	if (rc) {
		cells_free(&c);
		return rc;
	}
	rc = q_nvtx_groups_order(q, &gs, 0, &order, &vals);
	if (!rc && sums_failed(c.active, c.nseries * bk->n))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		series_head(q, gs.n, total);
		q_page(q, gs.n, &from, &to);
		for (size_t k = from; k < to; k++) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			qkey_emit(q->out, &gs.keys.keys[order[k]]);
			emit_cells(q, &c, order[k]);
		}
	}
	cells_free(&c);
	free(order);
	free(vals);
	q_nvtx_groups_free(&gs);
	return rc;
}

static int nsys_by_name(struct qctx *q, const struct qbucket *bk,
                        size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct dataset_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	struct q_nvtx_groups gs;
	struct num *vals = NULL;
	size_t *order = NULL, *idx = NULL, np = 0, from, to, chunk, nn = 0;
	int64_t *rank_of = NULL; /* group index -> page position, or -1 */
	struct q_needle *nd = NULL;
	int done, rc = by_name_one_scan(q, bk, total, &done);

	if (rc || done)
		return rc;
	rc = q_nsys_groups(q, "name", &gs);
	if (rc)
		return rc;
	rc = q_nvtx_groups_order(q, &gs, 0, &order, &vals);
	if (!rc)
		series_head(q, gs.n, total);
	q_page(q, gs.n, &from, &to);
	chunk = CELLS_MAX / bk->n;
	if (!chunk)
		chunk = 1;
	if (!rc)
		rc = q_select_profiles(q, &idx, &np);
	if (!rc)
		rc = q_name_needles(q, &nd, &nn);
	if (!rc && !(rank_of = malloc((gs.n + 1) * sizeof *rank_of)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t c0 = from; !rc && c0 < to; c0 += chunk) {
		size_t c1 = to - c0 < chunk ? to : c0 + chunk;
		struct cells c;
		for (size_t g = 0; g < gs.n; g++)
			rank_of[g] = -1;
		for (size_t k = c0; k < c1; k++)
			rank_of[order[k]] = (int64_t)(k - c0);
		rc = cells_init(q, &c, bk, c1 - c0);
		for (size_t k = 0; !rc && k < np; k++) {
			const json_t *pr = json_array_get(profiles, idx[k]);
			const json_t *names = json_object_get(pr, "names");
			size_t nnm = json_array_size(names);
			int64_t *slot = malloc((nnm + 1) * sizeof *slot);
			unsigned char *ok = NULL;
			if (!slot || (nd && !(ok = q_match_names(names, nd, nn)))) {
				free(slot);
				rc = err_set(q->e, ERR_NOMEM, "out of memory");
				break;
			}
			/* a name's group: its key's dictionary entry */
			for (size_t i = 0; i <= nnm; i++) {
				const json_t *v = json_array_get(names, i);
				int64_t g = i < nnm && json_is_string(v)
				        ? qkeys_find_str(&gs.keys,
				                         json_string_value(v),
				                         json_string_length(v))
				        : gs.keys.null_group;
				slot[i] = g >= 0 ? rank_of[g] : -1;
			}
			c.slot_of_name = slot;
			c.nnames = nnm;
			c.name_ok = ok;
			rc = dataset_events(q->ds, (int64_t)idx[k], &w, on_range,
			                    &c, q->e);
			free(slot);
			free(ok);
		}
		if (!rc && sums_failed(c.active, c.nseries * bk->n))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		for (size_t k = c0; !rc && k < c1; k++) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			qkey_emit(q->out, &gs.keys.keys[order[k]]);
			emit_cells(q, &c, k - c0);
		}
		cells_free(&c);
	}
	free(rank_of);
	q_name_needles_free(nd, nn);
	free(idx);
	free(order);
	free(vals);
	q_nvtx_groups_free(&gs);
	return rc;
}

/* ---- cpu ---- */

struct sample_cells {
	const struct qbucket *bk;
	int64_t *samples;
};

static int on_sample(void *ctx, int64_t ordinal,
                     const struct row_sample *row)
{
	struct sample_cells *c = ctx;
	long i = qbucket_find(c->bk, row->time);
	(void)ordinal;
	if (i >= 0)
		c->samples[i]++;
	return 0;
}

static int cpu_series(struct qctx *q, const struct qbucket *bk,
                      size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct dataset_window w = {q->start, q->end, q_wide(q)};
	size_t *idx = NULL, n = 0, m = 0, from, to;
	int rc = q_select_profiles(q, &idx, &n);

	for (size_t k = 0; !rc && k < n; k++) /* keep those with CPU data */
		if (json_is_object(json_object_get(
			    json_array_get(profiles, idx[k]), "cpu")))
			idx[m++] = idx[k];
	if (!rc)
		series_head(q, m, total);
	q_page(q, m, &from, &to);
	for (size_t k = from; !rc && k < to; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		struct sample_cells c = {bk, calloc(bk->n, sizeof(int64_t))};
		if (!c.samples) {
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
			break;
		}
		rc = dataset_samples(q->ds, (int64_t)idx[k], &w, on_sample, &c,
		                     q->e);
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			struct qitem it;
			jsonout_int(q->out, q_id(pr, idx[k]));
			series_open(q, &it);
			int_array(&it, "samples", c.samples, bk->n);
			series_close(&it);
		}
		free(c.samples);
	}
	free(idx);
	return rc;
}

/* ---- metrics ---- */

struct point_cells {
	const struct qbucket *bk;
	int64_t *samples;
	struct held *min, *max;
	struct qsum *sum;
	int oom;
};

static void hold(struct point_cells *c, struct held *h, const struct num *v)
{
	free(h->big);
	h->big = NULL;
	h->v = *v;
	if (v->kind == NUM_BIG) {
		h->big = malloc(v->big_len ? v->big_len : 1);
		if (!h->big) {
			c->oom = 1;
			h->v.kind = NUM_NULL;
			return;
		}
		memcpy(h->big, v->big, v->big_len);
		h->v.big = h->big;
	}
}

static int on_point(void *ctx, int64_t ordinal,
                    const struct row_point *row)
{
	struct point_cells *c = ctx;
	long i = qbucket_find(c->bk, row->time);
	(void)ordinal;
	if (i < 0 || row->value.kind == NUM_NULL)
		return 0;
	/* ties keep the value seen first (ordinal order) */
	if (!c->samples[i] || num_cmp(&row->value, &c->min[i].v) < 0)
		hold(c, &c->min[i], &row->value);
	if (!c->samples[i] || num_cmp(&row->value, &c->max[i].v) > 0)
		hold(c, &c->max[i], &row->value);
	c->samples[i]++;
	qsum_add(&c->sum[i], num_to_double(&row->value));
	return c->oom;
}

static void held_array(struct qitem *it, const char *name,
                       const struct held *h, const int64_t *samples,
                       size_t n)
{
	values_array(it, name, n, (struct elems){samples, NULL, NULL, h});
}

static int one_metric(struct qctx *q, const struct qbucket *bk,
                      const json_t *series, size_t index)
{
	struct dataset_window w = {q->start, q->end, q_wide(q)};
	size_t n = bk->n;
	struct point_cells c = {bk, calloc(n, sizeof(int64_t)),
	                        calloc(n, sizeof(struct held)),
	                        calloc(n, sizeof(struct held)), new_sums(n), 0};
	double *div = calloc(n, sizeof *div);
	int rc = 0;

	if (!c.samples || !c.min || !c.max || !c.sum || !div)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc)
		rc = dataset_points(q->ds, (int64_t)index, &w, on_point, &c,
		                    q->e);
	if (!rc && (c.oom || sums_failed(c.sum, n)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		for (size_t i = 0; i < n; i++)
			div[i] = (double)c.samples[i];
		buf_puts(q->out, "{\"key\":");
		struct qitem it;
		jsonout_int(q->out, q_id(series, index));
		series_open(q, &it);
		int_array(&it, "samples", c.samples, n);
		held_array(&it, "min", c.min, c.samples, n);
		held_array(&it, "max", c.max, c.samples, n);
		/* a mean beyond the double range is null, as in metrics */
		quotient_array(&it, "mean", c.sum, div, n);
		series_close(&it);
	}
	for (size_t i = 0; i < n && c.min && c.max; i++) {
		free(c.min[i].big);
		free(c.max[i].big);
	}
	free(c.samples);
	free(c.min);
	free(c.max);
	free_sums(c.sum, n);
	free(div);
	return rc;
}

static int metrics_series(struct qctx *q, const struct qbucket *bk,
                          size_t *total)
{
	const json_t *all = q_array(q->cat, "metrics"), *s;
	size_t *idx = malloc((json_array_size(all) + 1) * sizeof *idx);
	size_t n = 0, k, from, to;
	int rc = 0;

	if (!idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(all, k, s) {
		if (q_keep_series(q, s))
			idx[n++] = k;
	}
	series_head(q, n, total);
	q_page(q, n, &from, &to);
	for (k = from; !rc && k < to; k++) {
		if (k > from)
			buf_putc(q->out, ',');
		rc = one_metric(q, bk, json_array_get(all, idx[k]), idx[k]);
	}
	free(idx);
	return rc;
}

/* ---- the response ---- */

int query_timeline(struct qctx *q)
{
	const char *of = q->p->of ? q->p->of : "requests";
	struct qbucket bk;
	struct buf *b = q->out;
	size_t total = 0;
	int rc;

	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	rc = qbucket_init(&bk, q->start, q->end, q->p->bucket);
	if (rc)
		return err_set(q->e, rc == 1 ? ERR_USAGE : ERR_NOMEM,
		               rc == 1 ? "Too many buckets; the most is 10000"
		                       : "out of memory");
	buf_puts(b, "{\"of\":");
	jsonout_cstr(b, of);
	buf_puts(b, ",\"bucket\":");
	jsonout_real(b, q->p->bucket);
	buf_puts(b, ",\"range\":[");
	jsonout_real(b, q->start);
	buf_putc(b, ',');
	jsonout_real(b, q->end);
	buf_puts(b, "],\"buckets\":[");
	for (size_t i = 0; i < bk.n; i++) {
		if (i)
			buf_putc(b, ',');
		jsonout_real(b, bk.b[i]);
	}
	buf_puts(b, "],");
	if (!strcmp(of, "requests")) {
		series_head(q, 1, &total);
		if (q->p->offset == 0 && q->p->limit > 0)
			rc = requests_series(q, &bk);
	} else if (!strcmp(of, "nsys")) {
		if (q->p->group_by && !strcmp(q->p->group_by, "name"))
			rc = nsys_by_name(q, &bk, &total);
		else
			rc = nsys_by_profile(q, &bk, &total);
	} else if (!strcmp(of, "cpu")) {
		rc = cpu_series(q, &bk, &total);
	} else {
		rc = metrics_series(q, &bk, &total);
	}
	qbucket_free(&bk);
	if (rc)
		return rc;
	buf_putc(b, ']');
	qjoin_emit(q);
	if (q->p->group_by && !strcmp(of, "nsys")) {
		buf_puts(b, ",\"group_by\":");
		jsonout_cstr(b, q->p->group_by);
	}
	q_list_close(q, total);
	return 0;
}
