/* qrange: NVTX range filters by duration and depth (see qrange.h). */
#include "query/qrange.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "query/qparams.h"

int qrange_check(struct qctx *q)
{
	const struct query_params *p = q->p;

	if (!qparam_used_by(qparam_by_name("max_depth"), q->kind))
		return 0;
	if (p->has_min_duration &&
	    !(isfinite(p->min_duration) && p->min_duration >= 0))
		return err_set(q->e, ERR_USAGE,
		               "min_duration must be finite and nonnegative");
	if (p->has_max_duration &&
	    !(isfinite(p->max_duration) && p->max_duration >= 0))
		return err_set(q->e, ERR_USAGE,
		               "max_duration must be finite and nonnegative");
	if (p->has_min_duration && p->has_max_duration &&
	    p->min_duration > p->max_duration)
		return err_set(q->e, ERR_USAGE,
		               "Require min_duration <= max_duration");
	if (p->has_max_depth && p->max_depth < 0)
		return err_set(q->e, ERR_USAGE, "max_depth must be >= 0");
	return 0;
}

int qrange_on(const struct qctx *q)
{
	const struct query_params *p = q->p;
	return p->has_min_duration || p->has_max_duration || p->has_max_depth;
}

/* The duration filters (inclusive; a NaN duration never passes). */
static int duration_ok(const struct query_params *p, double start,
                       double end)
{
	double d = end - start;
	if (p->has_min_duration && !(d >= p->min_duration))
		return 0;
	if (p->has_max_duration && !(d <= p->max_duration))
		return 0;
	return 1;
}

struct pass {
	const struct query_params *p;
	row_event_fn fn;
	void *ctx;
};

static int on_duration(void *ctx, int64_t ordinal, const struct row_event *row)
{
	struct pass *ps = ctx;
	if (!duration_ok(ps->p, row->start, row->end))
		return 0;
	return ps->fn(ps->ctx, ordinal, row);
}

/* ---- depth of every range overlapping a window ---- */

struct rrow {
	double start, end;
	int64_t name, source_row, ordinal, depth;
	size_t tid_off, tid_len;
	size_t end_rank; /* 1-based rank of end among the distinct ends */
};

struct collect {
	struct rrow *r;
	size_t n, cap;
	char *tids; /* every row's tid text, back to back */
	size_t tn, tcap;
	int oom;
};

static int on_collect(void *ctx, int64_t ordinal, const struct row_event *row)
{
	struct collect *c = ctx;
	struct rrow *x;

	if (vec_reserve(&c->r, &c->cap, c->n + 1, sizeof *c->r) ||
	    vec_reserve(&c->tids, &c->tcap, c->tn + row->tid_len + 1, 1)) {
		c->oom = 1;
		return 1;
	}
	x = &c->r[c->n++];
	x->start = row->start;
	x->end = row->end;
	x->name = row->name;
	x->source_row = row->source_row;
	x->ordinal = ordinal;
	x->depth = 0;
	x->tid_off = c->tn;
	x->tid_len = row->tid_len;
	if (row->tid_len)
		memcpy(c->tids + c->tn, row->tid, row->tid_len);
	c->tn += row->tid_len;
	return 0;
}

/* A total order on doubles: NaN after every number. */
static int dcmp(double a, double b)
{
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	return isnan(a) - isnan(b);
}

static int tid_cmp(const struct collect *c, const struct rrow *a,
                   const struct rrow *b)
{
	size_t n = a->tid_len < b->tid_len ? a->tid_len : b->tid_len;
	int k = n ? memcmp(c->tids + a->tid_off, c->tids + b->tid_off, n) : 0;
	if (k)
		return k;
	return (a->tid_len > b->tid_len) - (a->tid_len < b->tid_len);
}

/* Thread, then start ascending, end descending, ordinal ascending: every
 * container of a range comes before it in its thread. */
static int nest_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct collect *c = ctx;
	const struct rrow *a = pa, *b = pb;
	int k = tid_cmp(c, a, b);
	if (k)
		return k;
	if ((k = dcmp(a->start, b->start)) != 0)
		return k;
	if ((k = dcmp(b->end, a->end)) != 0)
		return k;
	return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

static int end_cmp(const void *pa, const void *pb)
{
	return dcmp(*(const double *)pa, *(const double *)pb);
}

/* Fenwick tree over the end ranks 1..m. */
static void fen_add(int64_t *f, size_t m, size_t i, int64_t v)
{
	for (; i <= m; i += i & -i)
		f[i] += v;
}

static int64_t fen_prefix(const int64_t *f, size_t i)
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += f[i];
	return s;
}

/* Sets every row's depth: in nest order, the number of earlier rows of
 * its thread whose end is >= its end (they all start at or before it).
 * A range with a non-finite time contains nothing and has depth 0. */
static int set_depths(struct collect *c)
{
	double *ends = malloc((c->n ? c->n : 1) * sizeof *ends);
	int64_t *fen = NULL;
	size_t m = 0, g0 = 0;

	if (!ends)
		return -1;
	if (!c->n) {
		free(ends);
		return 0;
	}
	for (size_t k = 0; k < c->n; k++)
		ends[k] = c->r[k].end;
	qsort(ends, c->n, sizeof *ends, end_cmp);
	for (size_t k = 0; k < c->n; k++)
		if (!m || end_cmp(&ends[m - 1], &ends[k]))
			ends[m++] = ends[k];
	if (!(fen = calloc(m + 1, sizeof *fen))) {
		free(ends);
		return -1;
	}
	qsort_r(c->r, c->n, sizeof *c->r, nest_cmp, c);
	for (size_t k = 0; k < c->n; k++) {
		struct rrow *x = &c->r[k];
		const double *at = bsearch(&x->end, ends, m, sizeof *ends,
		                           end_cmp);
		int finite = isfinite(x->start) && isfinite(x->end);
		x->end_rank = (size_t)(at - ends) + 1;
		if (k > g0 && tid_cmp(c, &c->r[g0], x)) {
			/* a new thread: empty the tree */
			for (size_t i = g0; i < k; i++)
				if (isfinite(c->r[i].start) &&
				    isfinite(c->r[i].end))
					fen_add(fen, m, c->r[i].end_rank, -1);
			g0 = k;
		}
		x->depth = finite ? fen_prefix(fen, m) -
		                            fen_prefix(fen, x->end_rank - 1)
		                  : 0;
		if (finite)
			fen_add(fen, m, x->end_rank, 1);
	}
	free(fen);
	free(ends);
	return 0;
}

static int depth_events(struct qctx *q, int64_t profile,
                        const struct row_window *w, row_event_fn fn,
                        void *ctx)
{
	struct collect c;
	int rc;

	memset(&c, 0, sizeof c);
	rc = dataset_events(q->ds, profile, w, on_collect, &c, q->e);
	if (!rc && (c.oom || set_depths(&c)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; !rc && k < c.n; k++) {
		const struct rrow *x = &c.r[k];
		struct row_event row;
		if (x->depth > q->p->max_depth ||
		    !duration_ok(q->p, x->start, x->end))
			continue;
		row.start = x->start;
		row.end = x->end;
		row.name = x->name;
		row.tid = c.tids ? c.tids + x->tid_off : "";
		row.tid_len = x->tid_len;
		row.source_row = x->source_row;
		rc = fn(ctx, x->ordinal, &row);
	}
	free(c.r);
	free(c.tids);
	return rc;
}

int qrange_events(struct qctx *q, int64_t profile,
                  const struct row_window *w, row_event_fn fn, void *ctx)
{
	struct pass ps = {q->p, fn, ctx};

	if (q->p->has_max_depth)
		return depth_events(q, profile, w, fn, ctx);
	if (!qrange_on(q))
		return dataset_events(q->ds, profile, w, fn, ctx, q->e);
	return dataset_events(q->ds, profile, w, on_duration, &ps, q->e);
}

/* ---- the depths of a page's rows ---- */

/* Whether a contains r (r at ordinal ro; a at ordinal ao). */
static int contains(const struct row_event *a, int64_t ao,
                    const struct qrange_row *r)
{
	if (ao == r->ordinal || a->tid_len != r->tid_len ||
	    (r->tid_len && memcmp(a->tid, r->tid, r->tid_len)))
		return 0;
	if (!(isfinite(a->start) && isfinite(a->end)) ||
	    !(a->start <= r->start && a->end >= r->end))
		return 0;
	return !(a->start == r->start && a->end == r->end && ao > r->ordinal);
}

struct batch {
	struct qrange_row **rows; /* the rows of one profile */
	size_t n;
};

static int on_candidate(void *ctx, int64_t ordinal, const struct row_event *a)
{
	struct batch *bt = ctx;
	for (size_t k = 0; k < bt->n; k++)
		bt->rows[k]->depth += contains(a, ordinal, bt->rows[k]);
	return 0;
}

static int finite_row(const struct qrange_row *r)
{
	return isfinite(r->start) && isfinite(r->end);
}

static int by_start(const void *a, const void *b)
{
	const struct qrange_row *x = *(struct qrange_row *const *)a;
	const struct qrange_row *y = *(struct qrange_row *const *)b;
	return (x->start > y->start) - (x->start < y->start);
}

/* The depths of one profile's rows (finite times): every container of a
 * row is alive at its start, so the most rows whose starts lie within
 * duration/64 of each other share one scan of that window; each other row
 * scans its own start. */
static int profile_depths(struct qctx *q, int64_t profile, struct batch *bt)
{
	double limit = q->duration / 64;
	size_t best = 0, bi = 0, i = 0;
	int rc = 0;

	qsort(bt->rows, bt->n, sizeof *bt->rows, by_start);
	for (size_t j = 0; j < bt->n; j++) {
		while (bt->rows[j]->start - bt->rows[i]->start > limit)
			i++;
		if (j + 1 - i > best) {
			best = j + 1 - i;
			bi = i;
		}
	}
	if (best > 1) {
		struct row_window w = {bt->rows[bi]->start,
		                           bt->rows[bi + best - 1]->start, 0};
		struct batch some = {bt->rows + bi, best};
		rc = dataset_events(q->ds, profile, &w, on_candidate, &some, q->e);
	}
	for (size_t j = 0; j < bt->n && !rc; j++) {
		struct row_window w = {bt->rows[j]->start, bt->rows[j]->start,
		                           0};
		struct batch one = {&bt->rows[j], 1};
		if (best > 1 && j >= bi && j < bi + best)
			continue;
		rc = dataset_events(q->ds, profile, &w, on_candidate, &one, q->e);
	}
	return rc;
}

int qrange_depths(struct qctx *q, struct qrange_row *rows, size_t n)
{
	struct qrange_row **mine = malloc((n ? n : 1) * sizeof *mine);
	unsigned char *done = calloc(n ? n : 1, 1);
	int rc = 0;

	if (!mine || !done) {
		free(mine);
		free(done);
		return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++)
		rows[k].depth = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		struct batch bt = {mine, 0};
		if (done[k])
			continue;
		/* the rows of this profile with finite times */
		for (size_t j = k; j < n; j++) {
			if (done[j] || rows[j].pindex != rows[k].pindex)
				continue;
			done[j] = 1;
			if (finite_row(&rows[j]))
				mine[bt.n++] = &rows[j];
		}
		if (bt.n)
			rc = profile_depths(q, rows[k].pindex, &bt);
	}
	free(mine);
	free(done);
	return rc;
}
