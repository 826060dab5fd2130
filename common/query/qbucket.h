/*
 * qbucket: the time buckets of the timeline kind (doc/query-semantics.md
 * "timeline").  Over a window [start, end] and a bucket width w > 0, n is
 * the smallest n >= 1 with start + n*w >= end, computed in doubles; bucket
 * i starts at b_i = start + i*w; bucket i < n-1 is [b_i, b_{i+1}) and the
 * last is [b_{n-1}, end].  A time finds its bucket by comparison with the
 * computed starts, never by division.  Compiled without floating-point
 * contraction (no fused multiply-add; see the Makefile).
 */
#ifndef DSIGHT_QBUCKET_H
#define DSIGHT_QBUCKET_H

#include <stddef.h>
#include <stdint.h>

#define QBUCKET_MAX 10000

struct qbucket {
	double start, end, width;
	size_t n;
	double *b; /* n + 1 values: the starts, then b[n] = end */
};

/* Computes the buckets (start <= end, width > 0 and finite).  Returns 0,
 * 1 when more than QBUCKET_MAX buckets would be needed (nothing
 * allocated), or -1 out of memory.  Free with qbucket_free. */
int qbucket_init(struct qbucket *q, double start, double end, double width);
void qbucket_free(struct qbucket *q);

/* The bucket holding time t (b_i <= t < b_{i+1}, or the last bucket's
 * b_{n-1} <= t <= end), or -1 when t is outside [start, end]. */
long qbucket_find(const struct qbucket *q, double t);

/* The end used for interval overlap with bucket i: b_{i+1} (the next
 * start) or end for the last bucket. */
static inline double qbucket_edge(const struct qbucket *q, size_t i)
{
	return q->b[i + 1];
}

/* Bucket length: b_{i+1} - b_i (end - b_{n-1} for the last). */
double qbucket_length(const struct qbucket *q, size_t i);

/* The first bucket i whose [b_i, edge_i] an interval [a, z] overlaps
 * (a <= edge_i && z >= b_i), or q->n when none; the overlapping buckets
 * are i, i+1, ... while b_i <= z. */
size_t qbucket_first_overlap(const struct qbucket *q, double a, double z);

/*
 * Buckets made of whole bins of width w (the build-time bins of
 * doc/report-files.md "Summaries": bin j is [j*w, (j+1)*w)): when start
 * is a multiple of w, the width a whole multiple `per` of w and every
 * computed start b_i exactly (i0 + i*per)*w, the bins i0..i1-1, i1*w <= end
 * the last edge at or before end, lie inside the window and each inside
 * one bucket ((j - i0) / per); the rows at or after i1*w (`rest`) are
 * left to a scan of [rest, end].  Returns 1 and fills *out when so (and
 * i0 < i1), else 0.
 */
struct qbucket_bins {
	double width, rest;
	int64_t i0, i1, per;
};
int qbucket_bins(const struct qbucket *q, double w, struct qbucket_bins *out);

/* The bucket holding bin j of i0..i1-1. */
size_t qbucket_bin_bucket(const struct qbucket *q,
                          const struct qbucket_bins *b, int64_t j);

#endif
