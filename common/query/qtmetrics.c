/* qtmetrics: the timeline's metrics series (see qtmetrics.h). */
#include "query/qtmetrics.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qkinds.h"
#include "query/qtline.h"

int qtm_hold(struct qtline_held *h, const struct num *v)
{
	free(h->big);
	h->big = NULL;
	h->v = *v;
	if (v->kind == NUM_BIG) {
		h->big = malloc(v->big_len ? v->big_len : 1);
		if (!h->big) {
			h->v.kind = NUM_NULL;
			return -1;
		}
		memcpy(h->big, v->big, v->big_len);
		h->v.big = h->big;
	}
	return 0;
}

static void hold(struct qtm_cells *c, struct qtline_held *h, const struct num *v)
{
	if (qtm_hold(h, v))
		c->oom = 1;
}

/* Bucket i takes p's samples (p->bin unused): the smallest value min
 * (ordinal min_ordinal), the largest max and the exact sum's parts; ties
 * keep the smallest ordinal, the value a scan in ordinal order sees
 * first. */
static void add_points(struct qtm_cells *c, size_t i,
                       const struct store_sumbins_point *p)
{
	int m;
	if (!c->samples[i] || (m = num_cmp(&p->min, &c->min[i].v)) < 0 ||
	    (m == 0 && p->min_ordinal < c->min_ord[i])) {
		hold(c, &c->min[i], &p->min);
		c->min_ord[i] = p->min_ordinal;
	}
	if (!c->samples[i] || (m = num_cmp(&p->max, &c->max[i].v)) > 0 ||
	    (m == 0 && p->max_ordinal < c->max_ord[i])) {
		hold(c, &c->max[i], &p->max);
		c->max_ord[i] = p->max_ordinal;
	}
	c->samples[i] += p->samples;
	for (size_t k = 0; k < p->nsum; k++)
		qsum_add(&c->sum[i], p->sum[k]);
}

static int on_point(void *ctx, int64_t ordinal,
                    const struct row_point *row)
{
	struct qtm_cells *c = ctx;
	long i = qbucket_find(c->bk, row->time);
	struct store_sumbins_point one;
	double d;
	if (i < 0 || row->value.kind == NUM_NULL)
		return 0;
	d = num_to_double(&row->value);
	one.bin = 0;
	one.samples = 1;
	one.min = one.max = row->value;
	one.min_ordinal = one.max_ordinal = ordinal;
	one.sum = &d;
	one.nsum = 1;
	add_points(c, (size_t)i, &one);
	return c->oom;
}

static int on_point_bin(void *ctx, const struct store_sumbins_point *p)
{
	struct qtm_cells *c = ctx;
	add_points(c, qbucket_bin_bucket(c->bk, &c->bins, p->bin), p);
	return c->oom;
}

/* The points of series into c: from the build-time bins inside
 * [start, rest) and a scan of [rest, end] when the buckets are made of
 * whole bins, else from a scan of the window. */
static int point_cells_fill(struct qctx *q, int64_t series,
                            struct qtm_cells *c)
{
	struct row_window w = {q->start, q->end, q_wide(q)};
	int have = 0, rc = 0;

	if (qbucket_bins(c->bk, 1.0, &c->bins)) {
		const struct row_bins b = {series, 1.0, c->bins.i0, c->bins.i1};
		rc = dataset_point_bins(q->ds, &b, &have, on_point_bin, c, q->e);
	}
	if (!rc && have)
		w = (struct row_window){c->bins.rest, q->end, 0};
	if (!rc)
		rc = dataset_points(q->ds, series, &w, on_point, c, q->e);
	return rc;
}

static void held_array(struct qitem *it, const char *name,
                       const struct qtline_held *h, const int64_t *samples,
                       size_t n)
{
	qtline_values_array(it, name, n, (struct qtline_elems){samples, NULL, NULL, h});
}

int qtm_cells_fill(struct qctx *q, const struct qbucket *bk, int64_t series,
                   struct qtm_cells *c)
{
	size_t n = bk->n;
	int rc = 0;

	memset(c, 0, sizeof *c);
	c->bk = bk;
	c->samples = calloc(n, sizeof *c->samples);
	c->min = calloc(n, sizeof *c->min);
	c->max = calloc(n, sizeof *c->max);
	c->sum = qtline_new_sums(n);
	c->min_ord = calloc(n, sizeof *c->min_ord);
	c->max_ord = calloc(n, sizeof *c->max_ord);
	if (!c->samples || !c->min || !c->max || !c->sum || !c->min_ord ||
	    !c->max_ord)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc)
		rc = point_cells_fill(q, series, c);
	if (!rc && (c->oom || qtline_sums_failed(c->sum, n)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	return rc;
}

void qtm_cells_free(struct qtm_cells *c)
{
	size_t n = c->bk ? c->bk->n : 0;
	for (size_t i = 0; i < n && c->min && c->max; i++) {
		free(c->min[i].big);
		free(c->max[i].big);
	}
	free(c->samples);
	free(c->min);
	free(c->max);
	free(c->min_ord);
	free(c->max_ord);
	qtline_free_sums(c->sum, n);
	memset(c, 0, sizeof *c);
}

static int one_metric(struct qctx *q, const struct qbucket *bk,
                      const json_t *series, size_t index)
{
	size_t n = bk->n;
	struct qtm_cells c;
	double *div = calloc(n, sizeof *div);
	int rc = qtm_cells_fill(q, bk, (int64_t)index, &c);

	if (!rc && !div)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		for (size_t i = 0; i < n; i++)
			div[i] = (double)c.samples[i];
		buf_puts(q->out, "{\"key\":");
		struct qitem it;
		jsonout_int(q->out, q_id(series, index));
		qtline_series_open(q, &it);
		qtline_int_array(&it, "samples", c.samples, n);
		held_array(&it, "min", c.min, c.samples, n);
		held_array(&it, "max", c.max, c.samples, n);
		/* a mean beyond the double range is null, as in metrics */
		qtline_quotient_array(&it, "mean", c.sum, div, n);
		qtline_series_close(&it);
	}
	qtm_cells_free(&c);
	free(div);
	return rc;
}

int qtmetrics_series(struct qctx *q, const struct qbucket *bk, size_t *total)
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
	qtline_series_head(q, n, total);
	q_page(q, n, &from, &to);
	for (k = from; !rc && k < to; k++) {
		if (k > from)
			buf_putc(q->out, ',');
		rc = one_metric(q, bk, json_array_get(all, idx[k]), idx[k]);
	}
	free(idx);
	return rc;
}

