/* qmgroup: metric roll-ups across series (see qmgroup.h). */
#include "query/qmgroup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qgroup.h"
#include "query/qlist.h"
#include "query/qtline.h"
#include "query/qtmetrics.h"

/* One group's cells over the buckets. */
struct mcells {
	size_t n;
	int64_t *series;  /* series with a point in the bucket */
	int64_t *samples;
	struct qtline_held *min, *max;
	struct qsum *sum;   /* every point */
	struct qsum *means; /* each series' mean */
	double *count;      /* samples as a divisor */
	double *one;        /* 1 where a series has a point, else 0 */
};

static void mcells_free(struct mcells *g)
{
	for (size_t i = 0; i < g->n && g->min && g->max; i++) {
		free(g->min[i].big);
		free(g->max[i].big);
	}
	free(g->series);
	free(g->samples);
	free(g->min);
	free(g->max);
	qtline_free_sums(g->sum, g->n);
	qtline_free_sums(g->means, g->n);
	free(g->count);
	free(g->one);
	memset(g, 0, sizeof *g);
}

static int mcells_init(struct mcells *g, size_t n)
{
	memset(g, 0, sizeof *g);
	g->n = n;
	g->series = calloc(n, sizeof *g->series);
	g->samples = calloc(n, sizeof *g->samples);
	g->min = calloc(n, sizeof *g->min);
	g->max = calloc(n, sizeof *g->max);
	g->sum = qtline_new_sums(n);
	g->means = qtline_new_sums(n);
	g->count = calloc(n, sizeof *g->count);
	g->one = calloc(n, sizeof *g->one);
	return g->series && g->samples && g->min && g->max && g->sum &&
	               g->means && g->count && g->one
	               ? 0
	               : -1;
}

/* Adds one series' cells (series come in catalog order: a tie keeps the
 * value held). */
static int merge(struct mcells *g, const struct qtm_cells *c)
{
	int bad = 0;
	for (size_t i = 0; i < g->n; i++) {
		int64_t k = c->samples[i];
		if (!k)
			continue;
		if (!g->samples[i] || num_cmp(&c->min[i].v, &g->min[i].v) < 0)
			bad |= qtm_hold(&g->min[i], &c->min[i].v);
		if (!g->samples[i] || num_cmp(&c->max[i].v, &g->max[i].v) > 0)
			bad |= qtm_hold(&g->max[i], &c->max[i].v);
		g->samples[i] += k;
		g->series[i]++;
		g->count[i] = (double)g->samples[i];
		g->one[i] = 1.0;
		qsum_merge(&g->sum[i], &c->sum[i]);
		qsum_add(&g->means[i], qsum_value(&c->sum[i]) / (double)k);
	}
	return bad;
}

/* The selected series (catalog indexes), their group index and the
 * groups in key order. */
struct plan {
	size_t *idx, n;
	int64_t *group; /* per selected series */
	struct qkeys keys;
	size_t *order;  /* group indexes in key order */
	size_t ngroups;
};

static void plan_free(struct plan *p)
{
	free(p->idx);
	free(p->group);
	free(p->order);
	qkeys_free(&p->keys);
}

static int cmp_group(const void *a, const void *b, void *ctx)
{
	const struct qkeys *k = ctx;
	return qkey_cmp(&k->keys[*(const size_t *)a], &k->keys[*(const size_t *)b]);
}

static int plan_make(struct qctx *q, struct plan *p)
{
	const json_t *all = q_array(q->cat, "metrics"), *s;
	const char *field = q->p->group_by;
	size_t total = json_array_size(all), k;

	memset(p, 0, sizeof *p);
	qkeys_init(&p->keys);
	p->idx = malloc((total + 1) * sizeof *p->idx);
	p->group = malloc((total + 1) * sizeof *p->group);
	if (!p->idx || !p->group)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(all, k, s) {
		const json_t *v;
		int64_t g;
		if (!q_keep_series(q, s))
			continue;
		v = json_object_get(s, field);
		g = json_is_string(v) ? qkeys_str(&p->keys, json_string_value(v),
		                                  json_string_length(v))
		                      : qkeys_null(&p->keys);
		if (g < 0)
			return err_set(q->e, ERR_NOMEM, "out of memory");
		p->idx[p->n] = k;
		p->group[p->n++] = g;
	}
	p->ngroups = (size_t)p->keys.count;
	p->order = malloc((p->ngroups + 1) * sizeof *p->order);
	if (!p->order)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t g = 0; g < p->ngroups; g++)
		p->order[g] = g;
	qsort_r(p->order, p->ngroups, sizeof *p->order, cmp_group, &p->keys);
	return 0;
}

/* The cells of group g over bk; *nseries its selected series. */
static int group_cells(struct qctx *q, const struct plan *p, size_t g,
                       const struct qbucket *bk, struct mcells *out,
                       int64_t *nseries)
{
	int rc = 0;

	*nseries = 0;
	if (mcells_init(out, bk->n))
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; !rc && k < p->n; k++) {
		struct qtm_cells c;
		if ((size_t)p->group[k] != g)
			continue;
		(*nseries)++;
		rc = qtm_cells_fill(q, bk, (int64_t)p->idx[k], &c);
		if (!rc && merge(out, &c))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		qtm_cells_free(&c);
	}
	if (!rc && (qtline_sums_failed(out->sum, out->n) ||
	            qtline_sums_failed(out->means, out->n)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	return rc;
}

static void put_quotient(struct buf *b, const struct qsum *s, double div)
{
	double v = div > 0 ? qsum_value(s) / div : NAN;
	if (isfinite(v))
		jsonout_real(b, v);
	else
		buf_puts(b, "null");
}

static void put_held(struct buf *b, const struct qtline_held *h, int64_t n)
{
	if (n)
		num_emit(b, &h->v);
	else
		buf_puts(b, "null");
}

int qmgroup_metrics(struct qctx *q)
{
	struct plan p;
	double b[2] = {q->start, q->end};
	/* one bucket over the window, as wide as a whole number of seconds
	 * when it starts on one (so the build-time bins serve it) */
	struct qbucket one = {q->start, q->end, ceil(q->end - q->start), 1, b};
	size_t from, to, ngroups;
	int rc = dataset_check_generation(q->ds, q->e);

	if (!rc)
		rc = plan_make(q, &p);
	if (rc) {
		plan_free(&p);
		return rc;
	}
	if (!(one.width >= 1))
		one.width = 1;
	q_page(q, p.ngroups, &from, &to);
	q_list_head(q, p.ngroups);
	for (size_t k = from; !rc && k < to; k++) {
		struct mcells g;
		struct qitem it;
		int64_t nseries;
		rc = group_cells(q, &p, p.order[k], &one, &g, &nseries);
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			qi_begin(&it, q);
			if (qi_key(&it, "key"))
				qkey_emit(q->out, &p.keys.keys[p.order[k]]);
			if (qi_key(&it, "series"))
				jsonout_int(q->out, nseries);
			if (qi_key(&it, "samples"))
				jsonout_int(q->out, g.samples[0]);
			if (qi_key(&it, "min"))
				put_held(q->out, &g.min[0], g.samples[0]);
			if (qi_key(&it, "max"))
				put_held(q->out, &g.max[0], g.samples[0]);
			if (qi_key(&it, "mean"))
				put_quotient(q->out, &g.sum[0], g.count[0]);
			if (qi_key(&it, "sum_of_means"))
				put_quotient(q->out, &g.means[0], g.one[0]);
			qi_end(&it);
		}
		mcells_free(&g);
	}
	ngroups = p.ngroups;
	plan_free(&p);
	if (rc)
		return rc;
	q_list_tail(q);
	buf_puts(q->out, ",\"group_by\":");
	jsonout_cstr(q->out, q->p->group_by);
	q_list_close(q, ngroups);
	return 0;
}

int qmgroup_timeline(struct qctx *q, const struct qbucket *bk, size_t *total)
{
	struct plan p;
	size_t from, to;
	int rc = plan_make(q, &p);

	if (!rc)
		qtline_series_head(q, p.ngroups, total);
	q_page(q, p.ngroups, &from, &to);
	for (size_t k = from; !rc && k < to; k++) {
		struct mcells g;
		struct qitem it;
		int64_t nseries;
		rc = group_cells(q, &p, p.order[k], bk, &g, &nseries);
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			qkey_emit(q->out, &p.keys.keys[p.order[k]]);
			qtline_series_open(q, &it);
			qtline_int_array(&it, "series", g.series, g.n);
			qtline_int_array(&it, "samples", g.samples, g.n);
			qtline_values_array(&it, "min", g.n,
			                    (struct qtline_elems){g.samples, NULL,
			                                          NULL, g.min});
			qtline_values_array(&it, "max", g.n,
			                    (struct qtline_elems){g.samples, NULL,
			                                          NULL, g.max});
			qtline_quotient_array(&it, "mean", g.sum, g.count, g.n);
			qtline_quotient_array(&it, "sum_of_means", g.means, g.one,
			                      g.n);
			qtline_series_close(&it);
		}
		mcells_free(&g);
	}
	plan_free(&p);
	return rc;
}
