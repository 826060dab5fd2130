/*
 * qtmetrics: the metrics source of the timeline kind (doc/query-semantics.md
 * "timeline"): per selected series and bucket the non-null points'
 * samples, min, max (number kind kept; ties: the smallest ordinal) and
 * mean (correctly rounded sum / samples), from a scan or, for buckets of
 * whole seconds, from the build-time point bins (store/store_sumbins.h).
 */
#ifndef DSIGHT_QTMETRICS_H
#define DSIGHT_QTMETRICS_H

#include <stddef.h>

#include "query/qbucket.h"
#include "query/qshared.h"

/* Writes `"total":...,"series":[` and the page of series; *total the
 * number of series. */
int qtmetrics_series(struct qctx *q, const struct qbucket *bk, size_t *total);

#endif
