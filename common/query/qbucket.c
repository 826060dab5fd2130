/* qbucket: timeline bucket edges and membership (see qbucket.h).  Every
 * edge is start + i*width in doubles, multiplied then added with two
 * roundings: this file must be compiled with -ffp-contract=off. */
#include "query/qbucket.h"

#include <math.h>
#include <stdlib.h>

static double edge(double start, size_t i, double width)
{
	volatile double step = (double)i * width; /* no fused multiply-add */
	return start + step;
}

int qbucket_init(struct qbucket *q, double start, double end, double width)
{
	size_t lo = 1, hi = QBUCKET_MAX;

	q->start = start;
	q->end = end;
	q->width = width;
	q->n = 0;
	q->b = NULL;
	/* start + k*width is non-decreasing in k: binary search the
	 * smallest k with start + k*width >= end */
	if (!(edge(start, QBUCKET_MAX, width) >= end))
		return 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (edge(start, mid, width) >= end)
			hi = mid;
		else
			lo = mid + 1;
	}
	q->n = lo;
	q->b = malloc((q->n + 1) * sizeof *q->b);
	if (!q->b)
		return -1;
	for (size_t i = 0; i < q->n; i++)
		q->b[i] = edge(start, i, width);
	q->b[q->n] = end;
	return 0;
}

void qbucket_free(struct qbucket *q)
{
	free(q->b);
	q->b = NULL;
	q->n = 0;
}

long qbucket_find(const struct qbucket *q, double t)
{
	size_t lo = 0, hi;

	if (!(t >= q->start && t <= q->end) || !q->n)
		return -1;
	/* the largest i < n with b[i] <= t */
	hi = q->n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (q->b[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return (long)lo;
}

double qbucket_length(const struct qbucket *q, size_t i)
{
	return q->b[i + 1] - q->b[i];
}

size_t qbucket_first_overlap(const struct qbucket *q, double a, double z)
{
	size_t lo = 0, hi = q->n;

	/* the smallest i with edge_i = b[i+1] >= a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->b[mid + 1] >= a)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < q->n && z >= q->b[lo])
		return lo;
	return q->n;
}

/* Bins stay far below 2^53 (the edges exact in doubles). */
#define BIN_LIMIT 1e12

int qbucket_bins(const struct qbucket *q, double w, struct qbucket_bins *out)
{
	double s0 = q->start / w, per = q->width / w, i1;

	if (!q->n || !(q->start >= 0) || !(q->end <= BIN_LIMIT * w) ||
	    s0 != floor(s0) || s0 * w != q->start || per != floor(per) ||
	    per < 1 || per * w != q->width)
		return 0;
	for (size_t i = 0; i < q->n; i++) {
		volatile double step = (double)i * per;
		if ((s0 + step) * w != q->b[i])
			return 0;
	}
	i1 = floor(q->end / w);
	while (i1 > 0 && i1 * w > q->end)
		i1 -= 1;
	while ((i1 + 1) * w <= q->end)
		i1 += 1;
	if (!(i1 > s0))
		return 0;
	out->width = w;
	out->i0 = (int64_t)s0;
	out->i1 = (int64_t)i1;
	out->per = (int64_t)per;
	out->rest = i1 * w;
	return 1;
}

size_t qbucket_bin_bucket(const struct qbucket *q,
                          const struct qbucket_bins *b, int64_t j)
{
	int64_t i = (j - b->i0) / b->per;
	if (i < 0)
		return 0;
	return (size_t)i < q->n ? (size_t)i : q->n - 1;
}
