/*
 * qrange: the NVTX range filters of nsys, nsys --group-by and timeline
 * --of nsys (--min-duration, --max-duration, --max-depth) and a range's
 * depth (doc/query-semantics.md "Depth and duration").  The depth of a
 * range is the number of ranges of its profile and thread (global_tid
 * text) that contain it: a.start <= r.start and a.end >= r.end, where of
 * two identical ranges only the one with the smaller ordinal contains the
 * other.  Every container of r overlaps whatever r overlaps, so the depths
 * of the ranges overlapping a window are computed from those ranges alone.
 */
#ifndef DSIGHT_QRANGE_H
#define DSIGHT_QRANGE_H

#include <stdint.h>

#include "base/row.h"
#include "query/qshared.h"

/* Validation (usage errors): the durations finite and >= 0, min <= max,
 * the depth >= 0.  0 when q->kind uses none of them. */
int qrange_check(struct qctx *q);

/* Whether a range filter is given (the build-time summaries, which count
 * every range, then do not apply). */
int qrange_on(const struct qctx *q);

/* dataset_events of profile over w, keeping the ranges that pass the
 * filters (every range when none is given; order unspecified). */
int qrange_events(struct qctx *q, int64_t profile,
                  const struct row_window *w, row_event_fn fn, void *ctx);

/* A page row whose depth is wanted: in, its profile (catalog index),
 * ordinal and row (tid copied, owned by the caller); out, depth. */
struct qrange_row {
	int64_t pindex, ordinal;
	double start, end;
	char *tid;
	size_t tid_len;
	int64_t depth;
};

/* Sets the depth of rows[0..n): the ranges alive at a row's start are its
 * candidate containers, read with one scan per profile when the rows'
 * starts lie close together (a page in start order), else one small scan
 * per row. */
int qrange_depths(struct qctx *q, struct qrange_row *rows, size_t n);

#endif
