/* qsum: exact mergeable sums (see qsum.h). */
#include "base/qsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
