/*
 * qmgroup: metric roll-ups, `--group-by name|worker|group|gpu|host` on
 * metrics and timeline --of metrics (doc/query-semantics.md "Metric
 * roll-ups").  The selected series are grouped by that member (a string,
 * else the null group; `group` is the series' family group); per group
 * (and per bucket on timeline): `series`, `samples`, `min`, `max` (number
 * kind kept; ties: the first series in catalog order, then the smallest
 * ordinal), `mean` (correctly rounded sum / samples) and `sum_of_means`
 * (the correctly rounded sum over series of each series' fsum / count).
 * Groups in key order (code point, null last), paged by offset/limit.
 */
#ifndef DSIGHT_QMGROUP_H
#define DSIGHT_QMGROUP_H

#include <stddef.h>

#include "query/qbucket.h"
#include "query/qshared.h"

/* The metrics kind with --group-by: the whole response. */
int qmgroup_metrics(struct qctx *q);

/* timeline --of metrics --group-by: `"total":...,"series":[` and the page
 * of groups as series; *total the number of groups. */
int qmgroup_timeline(struct qctx *q, const struct qbucket *bk, size_t *total);

#endif
