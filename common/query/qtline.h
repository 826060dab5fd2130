/*
 * qtline: the pieces of a timeline response its sources share
 * (query_timeline.c, qtmetrics.c; doc/query-semantics.md "timeline"): the
 * values arrays of a series item, the series list head and the per-bucket
 * exact sums.
 */
#ifndef DSIGHT_QTLINE_H
#define DSIGHT_QTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/num.h"
#include "base/qsum.h"
#include "query/qshared.h"

/* min / max of a bucket: the number, its big digits copied. */
struct qtline_held {
	struct num v;
	char *big;
};

/* One values array through the item (--fields picks the keys of values):
 * `"name":[e(0),...,e(n-1)]`, nothing when the key is left out. */
struct qtline_elems {
	const int64_t *ints;      /* integers */
	const struct qsum *sums;  /* sums, or sums / div when div is set */
	const double *div;        /* null where div is 0 or not finite */
	const struct qtline_held *held;  /* numbers, null where ints (samples) is 0 */
};

/* Writes the values array `name` of the item (nothing when --fields leaves
 * it out): integers, numbers held (null where ints is 0), sums rounded
 * once, or sums / div (null where div is 0 or the quotient not finite). */
void qtline_values_array(struct qitem *it, const char *name, size_t n,
                         struct qtline_elems e);
void qtline_int_array(struct qitem *it, const char *name, const int64_t *v,
                      size_t n);
void qtline_quotient_array(struct qitem *it, const char *name,
                           const struct qsum *sums, const double *div,
                           size_t n);
void qtline_sum_array(struct qitem *it, const char *name,
                      const struct qsum *sums, size_t n);

/* n empty sums (caller frees with qtline_free_sums); NULL out of memory. */
struct qsum *qtline_new_sums(size_t n);
void qtline_free_sums(struct qsum *s, size_t n);
/* True when one of the n sums could not grow (no longer exact). */
int qtline_sums_failed(const struct qsum *s, size_t n);

/* `"total":T,"offset":O,"limit":L,"series":[` once the number of series
 * is known (*out = total), before the first series. */
void qtline_series_head(struct qctx *q, size_t total, size_t *out);
/* After `{"key":<key>`: `,"values":` and the values item begun. */
void qtline_series_open(struct qctx *q, struct qitem *it);
/* Ends the values item and the series object. */
void qtline_series_close(struct qitem *it);

#endif
