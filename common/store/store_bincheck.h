/*
 * store_bincheck: the invariant that ties the per-second range bins of a
 * profile to its ranges (doc/report-files.md "Data errors").  The build
 * files every range of a profile with start >= 0 by the bin of its start,
 * at each width: either contained in the bin (counted in
 * dsight_summary_range_bins, and per name in dsight_summary_bins) or
 * touching an edge of it (one row of dsight_summary_crossing).  So, per
 * profile and width: the contained counts plus the crossing rows are the
 * ranges with start >= 0, and every bin lies in [0, the bin of the largest
 * start].  A row moved to another profile, width or bin, or deleted,
 * breaks one of these, though the rows a window reads may look sane.
 *
 * The check reads the group's rows once (sums and extremes over the
 * tables' primary keys) and probes the events index per duration bucket
 * (the ranges with a negative start, the largest start; the buckets found
 * by probing the index, not from the durations table); the caller keeps
 * the verdict for as long as the dataset is open.
 */
#ifndef DSIGHT_STORE_BINCHECK_H
#define DSIGHT_STORE_BINCHECK_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

/* 0 when the bins of profile at width (by_name: the per-name table
 * dsight_summary_bins, else dsight_summary_range_bins) and its crossing
 * rows agree with its ranges in events; *ok 0 when they do not (the caller
 * names the tables); ERR_DATA when SQLite cannot read them.  binsmax is
 * the most bins a profile has at one width. */
int store_bincheck_group(sqlite3 *db, int64_t profile, double width,
                         int by_name, int64_t binsmax, int *ok,
                         struct err *e);

#endif
