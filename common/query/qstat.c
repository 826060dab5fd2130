/* qstat: exact sums and order statistics (see qstat.h). */
#include "query/qstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

void qsum_init(struct qsum *s)
{
	memset(s, 0, sizeof *s);
}

void qsum_free(struct qsum *s)
{
	free(s->heap);
	qsum_init(s);
}

static double *parts_of(struct qsum *s)
{
	return s->heap ? s->heap : s->in;
}

/* Room for one more part; 0, or -1 (QSUM_NOMEM set). */
static int grow(struct qsum *s)
{
	uint32_t cap = s->heap ? s->cap : QSUM_INLINE;
	double *h;

	if (s->n < cap)
		return 0;
	if (cap > UINT32_MAX / 2) {
		s->special |= QSUM_NOMEM;
		return -1;
	}
	h = realloc(s->heap, (size_t)cap * 2 * sizeof *h);
	if (!h) {
		s->special |= QSUM_NOMEM;
		return -1;
	}
	if (!s->heap)
		memcpy(h, s->in, sizeof s->in);
	s->heap = h;
	s->cap = cap * 2;
	return 0;
}

/* Python's msum step: the parts stay non-overlapping, increasing in
 * magnitude, and sum exactly to the old value plus x. */
void qsum_add(struct qsum *s, double x)
{
	double *p = parts_of(s);
	uint32_t i = 0;
	double xsave = x;

	if (!isfinite(x)) {
		if (isnan(x))
			s->special |= QSUM_NAN;
		else
			s->special |= x > 0 ? QSUM_PINF : QSUM_NINF;
		return;
	}
	for (uint32_t j = 0; j < s->n; j++) {
		double y = p[j], hi, lo;
		if (fabs(x) < fabs(y)) {
			double t = x;
			x = y;
			y = t;
		}
		hi = x + y;
		lo = y - (hi - x);
		if (lo != 0.0)
			p[i++] = lo;
		x = hi;
	}
	s->n = i;
	if (x == 0.0)
		return;
	if (!isfinite(x)) {
		/* xsave is finite: an intermediate overflow */
		(void)xsave;
		s->special |= QSUM_OVERFLOW;
		s->n = 0;
		return;
	}
	if (grow(s))
		return;
	parts_of(s)[s->n++] = x;
}

void qsum_merge(struct qsum *s, const struct qsum *o)
{
	const double *p = o->heap ? o->heap : o->in;
	s->special |= o->special;
	for (uint32_t k = 0; k < o->n; k++)
		qsum_add(s, p[k]);
}

double qsum_value(const struct qsum *s)
{
	const double *p = s->heap ? s->heap : s->in;
	uint32_t n = s->n;
	double hi = 0.0, lo = 0.0;

	if (s->special & (QSUM_NAN | QSUM_OVERFLOW | QSUM_NOMEM))
		return NAN;
	if ((s->special & QSUM_PINF) && (s->special & QSUM_NINF))
		return NAN;
	if (s->special & QSUM_PINF)
		return INFINITY;
	if (s->special & QSUM_NINF)
		return -INFINITY;
	if (!n)
		return 0.0;
	hi = p[--n];
	/* from the top, stop when the sum becomes inexact */
	while (n > 0) {
		double x = hi, y = p[--n], yr;
		hi = x + y;
		yr = hi - x;
		lo = y - yr;
		if (lo != 0.0)
			break;
	}
	/* half-even rounding across several parts */
	if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) ||
	              (lo > 0.0 && p[n - 1] > 0.0))) {
		double y = lo * 2.0, x = hi + y, yr = x - hi;
		if (y == yr)
			hi = x;
	}
	return hi;
}

size_t qsum_parts(const struct qsum *s, const double **parts)
{
	*parts = s->heap ? s->heap : s->in;
	return s->n;
}

int qsum_failed(const struct qsum *s)
{
	return (s->special & QSUM_NOMEM) != 0;
}

/* ---- sums of numbers of either kind ---- */

void qnsum_init(struct qnsum *s)
{
	memset(s, 0, sizeof *s);
}

void qnsum_free(struct qnsum *s)
{
	qsum_free(&s->real);
	qnsum_init(s);
}

void qnsum_add(struct qnsum *s, const struct num *v)
{
	if (v->kind == NUM_NULL)
		return;
	s->count++;
	if (v->kind == NUM_INT)
		s->isum += v->i;
	else
		s->any_real = 1; /* NUM_BIG never fits: the real sum answers */
	qsum_add(&s->real, v->kind == NUM_REAL ? v->d : num_to_double(v));
}

void qnsum_merge(struct qnsum *s, const struct qnsum *o)
{
	s->isum += o->isum;
	s->any_real |= o->any_real;
	s->count += o->count;
	qsum_merge(&s->real, &o->real);
}

struct num qnsum_value(const struct qnsum *s)
{
	struct num r;
	memset(&r, 0, sizeof r);
	if (!s->any_real && s->isum >= INT64_MIN && s->isum <= INT64_MAX) {
		r.kind = NUM_INT;
		r.i = (int64_t)s->isum;
		r.d = (double)r.i;
	} else {
		r.kind = NUM_REAL;
		r.d = qsum_value(&s->real);
	}
	return r;
}

/* ---- order statistics ---- */

static int qobs_cmp(const void *a, const void *b)
{
	const struct qobs *x = a, *y = b;
	int c = num_cmp(&x->v, &y->v);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

void qobs_sort(struct qobs *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, qobs_cmp);
}

size_t qobs_rank(const struct qobs *sorted, size_t n, unsigned p)
{
	/* ceil(p * n / 100) in integers: exact for any n */
	unsigned __int128 k = ((unsigned __int128)p * n + 99) / 100;
	size_t i;

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	i = (size_t)k - 1;
	while (i > 0 && num_cmp(&sorted[i - 1].v, &sorted[i].v) == 0)
		i--;
	return i;
}

const char *const qstat_names[QSTAT_N] = {"min", "p50", "p90",
                                           "p99", "max", "mean"};

void qstat_compute(const struct qobs *sorted, size_t n, struct num out[QSTAT_N])
{
	static const unsigned ranks[5] = {0, 50, 90, 99, 100};
	struct qsum s;

	memset(out, 0, QSTAT_N * sizeof *out);
	if (!n)
		return;
	for (int k = 0; k < 5; k++)
		out[k] = sorted[qobs_rank(sorted, n, ranks[k])].v;
	qsum_init(&s);
	for (size_t k = 0; k < n; k++)
		qsum_add(&s, sorted[k].v.kind == NUM_REAL
		                     ? sorted[k].v.d
		                     : num_to_double(&sorted[k].v));
	out[5].kind = NUM_REAL;
	out[5].d = qsum_value(&s) / (double)n;
	qsum_free(&s);
}

void qstat_emit(struct buf *b, const struct num st[QSTAT_N])
{
	buf_putc(b, '{');
	for (int k = 0; k < QSTAT_N; k++) {
		if (k)
			buf_putc(b, ',');
		jsonout_cstr(b, qstat_names[k]);
		buf_putc(b, ':');
		num_emit(b, &st[k]);
	}
	buf_putc(b, '}');
}

struct num qnum_of(const json_t *v)
{
	struct num r;
	memset(&r, 0, sizeof r);
	if (json_is_integer(v)) {
		r.kind = NUM_INT;
		r.i = (int64_t)json_integer_value(v);
		r.d = (double)r.i;
	} else if (json_is_real(v)) {
		r.kind = NUM_REAL;
		r.d = json_real_value(v);
	}
	return r;
}
