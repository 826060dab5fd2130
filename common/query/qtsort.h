/*
 * qtsort: timeline --sort over the buckets of a one-series timeline
 * (doc/query-semantics.md "Top buckets"): the sort keys of each source,
 * and the answer re-shaped as items {"start", "end", <values>} in sort
 * order (ties keep time order), paged by offset/limit.
 */
#ifndef DSIGHT_QTSORT_H
#define DSIGHT_QTSORT_H

#include "query/qshared.h"

/* The bucket sort keys of a timeline of `of` (grouped: metrics
 * --group-by), NULL-ended, in message order. */
const char *const *qtsort_keys(const char *of, int grouped);

/* Parses q->p->sort against the keys of q's source into q->order (usage
 * error "Unknown sort key '<k>' for timeline; choose from <keys>"). */
int qtsort_check(struct qctx *q);

/* Answers q (q->order.n > 0) by running plain (the unsorted timeline) for
 * every series' count and the first series, then sorting its buckets.  A
 * timeline of several series is a usage error naming the fix. */
int qtsort_run(struct qctx *q, int (*plain)(struct qctx *q));

#endif
