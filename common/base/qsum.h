/*
 * qsum: exact sums of doubles that merge without rounding (the
 * "Arithmetic" rules of doc/query-semantics.md).
 *
 * A qsum holds the exact sum of the doubles added to it as a Shewchuk
 * expansion (non-overlapping parts, increasing magnitude), the algorithm of
 * Python's math.fsum; qsum_value rounds it once, to the double nearest the
 * exact sum.  Adding the parts of one qsum to another (qsum_merge) keeps
 * the result exact, so a sum precomputed at build time (store/, as its
 * parts) merges into a query's sum without changing the answer.  Compiled
 * without floating-point contraction (see the Makefile).
 */
#ifndef DSIGHT_QSUM_H
#define DSIGHT_QSUM_H

#include <stddef.h>
#include <stdint.h>

#define QSUM_INLINE 3

/* Special states (sticky bits of qsum.special). */
enum {
	QSUM_NAN = 1,      /* a NaN was added, or +inf and -inf */
	QSUM_PINF = 2,     /* +inf was added */
	QSUM_NINF = 4,     /* -inf was added */
	QSUM_OVERFLOW = 8, /* a partial sum overflowed (Python: OverflowError) */
	QSUM_NOMEM = 16,   /* growing the expansion failed */
};

struct qsum {
	double *heap;          /* parts beyond QSUM_INLINE (NULL: inline) */
	uint32_t n, cap;       /* parts in use; capacity of heap */
	unsigned special;      /* QSUM_* bits */
	double in[QSUM_INLINE];
};

/* An empty sum (0.0).  A zeroed struct is a valid empty sum too. */
void qsum_init(struct qsum *s);
/* Frees the parts' storage; s is an empty sum again. */
void qsum_free(struct qsum *s);
/* Adds x exactly.  Out of memory sets QSUM_NOMEM (see qsum_failed). */
void qsum_add(struct qsum *s, double x);
/* Adds the exact value of o to s (o unchanged). */
void qsum_merge(struct qsum *s, const struct qsum *o);
/* The double nearest the exact sum (ties to even), as math.fsum returns
 * it; NaN or an infinity for the special states (an overflow gives NaN). */
double qsum_value(const struct qsum *s);
/* The parts of the expansion (borrowed, valid until s changes): adding
 * them to an empty qsum in any order rebuilds the same exact value. */
size_t qsum_parts(const struct qsum *s, const double **parts);
/* True when storage could not grow (the sum is no longer exact). */
int qsum_failed(const struct qsum *s);

#endif
