/*
 * qstat: the exact arithmetic of the analysis answers (doc/query-semantics.md
 * "Arithmetic"): correctly rounded sums that can be merged exactly, sums
 * of integer-or-real values, and nearest-rank order statistics that keep
 * each value's number kind.
 *
 * The exact sums themselves are base/qsum.
 */
#ifndef DSIGHT_QSTAT_H
#define DSIGHT_QSTAT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/num.h"
#include "base/qsum.h"

/*
 * A sum of numbers of either kind: the exact integer sum while every value
 * is an integer and the total fits 64 bits, else the correctly rounded sum
 * of the values' nearest doubles.
 */
struct qnsum {
	__int128 isum;   /* exact sum of the integer values */
	int any_real;    /* a real value was added */
	int64_t count;   /* values added */
	struct qsum real; /* every value as its nearest double */
};

void qnsum_init(struct qnsum *s);
void qnsum_free(struct qnsum *s);
/* Adds a non-null number (NUM_INT, NUM_BIG or NUM_REAL). */
void qnsum_add(struct qnsum *s, const struct num *v);
void qnsum_merge(struct qnsum *s, const struct qnsum *o);
/* The sum as a number: NUM_INT or NUM_REAL (0 when nothing was added). */
struct num qnsum_value(const struct qnsum *s);

/* One value of an order statistic, with its position in the kind's
 * default order (ties between equal values go to the lowest). */
struct qobs {
	struct num v; /* NUM_INT, NUM_BIG or NUM_REAL; never NUM_NULL */
	size_t order;
};

/* Sorts by exact value, then by order. */
void qobs_sort(struct qobs *v, size_t n);
/* The index, in a qobs_sort-ed array of n >= 1 values, of the
 * nearest-rank p-th percentile (the ceil(p/100 * n)-th smallest, computed
 * exactly; p in 0..100, 0 meaning the smallest), moved to the first of the
 * values equal to it (the earliest in default order). */
size_t qobs_rank(const struct qobs *sorted, size_t n, unsigned p);

/* The statistics object {"min","p50","p90","p99","max","mean"} of n
 * values (already qobs_sort-ed); all null when n == 0.  mean = the
 * correctly rounded sum / n.  The six numbers are also returned in out[]
 * (same order; NUM_NULL when n == 0) for sorting. */
#define QSTAT_N 6
extern const char *const qstat_names[QSTAT_N];
void qstat_compute(const struct qobs *sorted, size_t n, struct num out[QSTAT_N]);
void qstat_emit(struct buf *b, const struct num st[QSTAT_N]);

/* A JSON-kind number from a jansson value (integer or real); NUM_NULL for
 * anything else. */
struct num qnum_of(const json_t *v);

#endif
