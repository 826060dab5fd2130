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
#include "query/qtline.h"

/* One series' points per bucket: the non-null points' count, smallest
 * and largest (held; ties: the smallest ordinal) and exact sum. */
struct qtm_cells {
	const struct qbucket *bk;
	int64_t *samples;
	struct qtline_held *min, *max;
	struct qsum *sum;
	int oom;
	int64_t *min_ord, *max_ord; /* the ordinal of the point held */
	struct qbucket_bins bins;
};

/* Allocates *c and fills it with the points of series (catalog index)
 * over bk's buckets (scan or build-time bins).  Free with qtm_cells_free
 * (also after an error). */
int qtm_cells_fill(struct qctx *q, const struct qbucket *bk, int64_t series,
                   struct qtm_cells *c);
void qtm_cells_free(struct qtm_cells *c);
/* Sets *h to v, copying big digits (h owns them); -1 out of memory (h is
 * then null). */
int qtm_hold(struct qtline_held *h, const struct num *v);

/* Writes `"total":...,"series":[` and the page of series; *total the
 * number of series. */
int qtmetrics_series(struct qctx *q, const struct qbucket *bk, size_t *total);

#endif
