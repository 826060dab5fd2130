/*
 * store_sumnames: per (profile, NVTX name) summaries of the whole run
 * (dsight_summary_names and dsight_summary_name_profiles, doc/report-files.md
 * "Summaries"), so `nsys --group-by name` over [0, duration] needs no scan:
 * per name index the number of ranges inside the run, the largest
 * duration, and the exact sums of the durations and of the time inside the
 * run, as the parts of base/qsum expansions (mergeable without rounding).
 *
 * Exactness.  A range [a, b] is in the whole-run window iff a <= D and
 * b >= 0 (D = the run duration); its time inside is min(b, D) - max(a, 0).
 * While loading, D is unknown, so the writer adds, for every range with
 * b >= 0, d = b - a and c = b - max(a, 0), and records the profile's
 * largest start and end.  At the end a profile is summarised only when both
 * are <= D: then every range with b >= 0 has a <= D (so it is in the
 * window, and no range outside it was added) and min(b, D) = b (so c is the
 * very double a scan computes).  Each sum is kept exactly, so the order of
 * the additions does not matter and a reader merging the parts gets the
 * exact sum a scan gets; the count and the maximum are order-free too.
 * Any other profile (a range after the run, a non-finite time, a name index
 * beyond NAMES_MAX, a sum that overflowed) has no row in
 * dsight_summary_name_profiles and is scanned.
 */
#ifndef DSIGHT_STORE_SUMNAMES_H
#define DSIGHT_STORE_SUMNAMES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"

/* ---- build side (the store writer's thread) ---- */

struct store_sumnames_acc;

/* A new, empty accumulator (caller frees); NULL when out of memory. */
struct store_sumnames_acc *store_sumnames_acc_new(void);
void store_sumnames_acc_free(struct store_sumnames_acc *a);

/* One NVTX range of profile with name index name (negative: no name).
 * ERR_NOMEM. */
int store_sumnames_event(struct store_sumnames_acc *a, int64_t profile,
                         int64_t name, double start, double end,
                         struct err *e);

/* Creates the tables in db and writes the exact summaries of the profiles
 * 0..nprof-1 for run duration `duration`. */
int store_sumnames_write(struct store_sumnames_acc *a, sqlite3 *db,
                         size_t nprof, double duration, struct err *e);

/* ---- read side ---- */

struct store_sumnames;

/* Opens the readers on db (borrowed).  *out is NULL (0 returned) when the
 * cache has no such tables; else owned by the caller.  Every reader below
 * takes a NULL s as "nothing summarised" (*have = 0). */
int store_sumnames_open(sqlite3 *db, struct store_sumnames **out,
                        struct err *e);
void store_sumnames_close(struct store_sumnames *s);

/* One name of a profile: name index (-1: ranges without a name), count,
 * largest duration, and the parts of the two exact sums (borrowed, valid
 * during the call).  A non-zero return stops the walk and is returned. */
typedef int (*store_sumnames_fn)(void *ctx, int64_t name, int64_t count,
                                 double max, const double *dur, size_t ndur,
                                 const double *clip, size_t nclip);

/* Calls fn for every name of profile and sets *have to 1, or sets it to 0
 * when the profile is not summarised.  ERR_DATA for a malformed row. */
int store_sumnames_profile(struct store_sumnames *s, int64_t profile,
                           int *have, store_sumnames_fn fn, void *ctx,
                           struct err *e);

/*
 * Bins of width w = 1 and 10 s (bin i is [i*w, (i+1)*w), exact in
 * doubles; below for w = 1, the same at w = 10 with edges i*10), for
 * `nsys --group-by name` over a window [ws, we] with whole bins
 * i0 = ceil(ws) .. i1 = floor(we) (i0 < i1).  Every range [a, b] with
 * 0 <= a is filed by the bin i = floor(a) of its start: a range with
 * i < a and b < i + 1 is *contained* and only counted in
 * dsight_summary_bins (per profile, bin and name: count, largest
 * duration, exact duration sum) and dsight_summary_range_bins (per
 * profile and bin, every name together: count, exact duration sum); any
 * other (it touches an edge of its bin) is listed in
 * dsight_summary_crossing.  A query splits the ranges
 * overlapping its window by start: a < i0 and a >= i1 are scanned (the
 * windows [ws, i0] and [i1, we] hold them all), and a in [i0, i1) come
 * from the bins i0..i1-1: a contained one lies inside [i0, i1] within the
 * window, so its time inside is min(b, we) - max(a, ws) = b - a, its
 * duration (the same double), and a crossing one is clipped one by one.
 * The parts are disjoint and cover every overlapping range, and the sums
 * are exact, so the answer is a scan's.  A profile with a non-finite
 * time, more than BINS_MAX bins or too many entries has no row in
 * dsight_summary_bin_profiles and is scanned.  A query takes the whole
 * 10-second bins inside [i0, i1) at width 10 and the seconds around them
 * at width 1: each start in [i0, i1) is in exactly one piece.
 */
typedef int (*store_sumnames_cross_fn)(void *ctx, int64_t name, double start,
                                       double end);
typedef int (*store_sumnames_bin_fn)(void *ctx, int64_t bin, int64_t name,
                                     int64_t count, const double *dur,
                                     size_t ndur);
/* The callbacks of a walk over the bins, each given ctx: name for
 * store_sumnames_bins, bin for store_sumnames_timeline, cross for both. */
struct store_sumnames_visit {
	store_sumnames_fn name;
	store_sumnames_bin_fn bin;
	store_sumnames_cross_fn cross;
	void *ctx;
};
/* v->name once per (bin, name) of the bins b->i0..b->i1-1 of profile
 * b->id at b->width (dur and clip are the same parts) and v->cross once
 * per crossing range starting in them; *have 0 when the profile has no
 * bins. */
int store_sumnames_bins(struct store_sumnames *s, const struct row_bins *b,
                        int *have, const struct store_sumnames_visit *v,
                        struct err *e);

/*
 * For `timeline --of nsys` over buckets made of whole bins: v->bin once
 * per bin of b with contained ranges, with the bin, the name index (-2
 * when by_name is 0: the bin's every name together, from
 * dsight_summary_range_bins; else one call per (bin, name)), the count
 * and the parts of their exact duration sum; cross as above.  A contained
 * range overlaps only the bucket holding its bin, its time inside being its
 * duration: a bucket starting at i*w sees the ranges that start there
 * (both ends of an overlap are inclusive) only because they are listed as
 * crossing.  *have 0 when the profile has no bins.
 */
int store_sumnames_timeline(struct store_sumnames *s,
                            const struct row_bins *b, int by_name, int *have,
                            const struct store_sumnames_visit *v,
                            struct err *e);

#endif
