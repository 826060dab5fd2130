/*
 * store_sumbins: per-second bins of CPU samples and metric points, written
 * at build time (dsight_summary_sample_bins, dsight_summary_point_bins,
 * doc/report-files.md "Summaries"), so `timeline --of cpu` and `--of
 * metrics` over buckets made of whole seconds need no scan.
 *
 * Bin i of width w (= 1 s; the width is a column so other widths can be
 * added) is [i*w, (i+1)*w), its edges exact in doubles.  A sample or point
 * with 0 <= time < BINS_MAX*w is filed by the bin whose computed edges hold
 * its time (comparison, never division).  A timeline whose buckets start at
 * bin edges takes bins i0..i1-1 (all before the window's end) and scans
 * only [i1*w, end]: every row inside the window is in exactly one of the
 * two, and what a bin keeps merges exactly:
 *
 * - samples: the count;
 * - points (non-null values only): their count, the smallest and largest
 *   value with the ordinal of the first point holding it (a bucket's
 *   minimum is the smallest value, the smallest ordinal among equals: what
 *   a scan in ordinal order keeps), and the exact sum of the values as
 *   doubles (base/qsum parts, merged without rounding).
 *
 * A profile or series the bins cannot hold exactly (a time beyond the
 * bins, a sum that is not finite, the build's
 * memory budget spent) has no row in the *_bin_profiles / *_bin_series
 * table and is scanned.
 */
#ifndef DSIGHT_STORE_SUMBINS_H
#define DSIGHT_STORE_SUMBINS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/num.h"
#include "base/row.h"

/* ---- build side (the store writer's thread) ---- */

struct store_sumbins_acc;

/* A new, empty accumulator (caller frees); NULL when out of memory. */
struct store_sumbins_acc *store_sumbins_acc_new(void);
void store_sumbins_acc_free(struct store_sumbins_acc *a);

/* One CPU sample of profile / one point of series (ordinal: its position
 * in the series).  ERR_NOMEM. */
int store_sumbins_sample(struct store_sumbins_acc *a, int64_t profile,
                         double time, struct err *e);
int store_sumbins_point(struct store_sumbins_acc *a, int64_t series,
                        int64_t ordinal, double time, const struct num *v,
                        struct err *e);

/* Creates the tables in db and writes the bins of profiles 0..nprof-1 and
 * series 0..nser-1. */
int store_sumbins_write(struct store_sumbins_acc *a, sqlite3 *db,
                        size_t nprof, size_t nser, struct err *e);

/* ---- read side ---- */

struct store_sumbins;

/* Opens the readers on db (borrowed).  *out is NULL (0 returned) when the
 * cache has no such tables; else owned by the caller.  Both readers below
 * take a NULL s as "nothing summarised" (*have = 0). */
int store_sumbins_open(sqlite3 *db, struct store_sumbins **out,
                       struct err *e);
void store_sumbins_close(struct store_sumbins *s);

/* fn(ctx, bin, samples) for each bin of b (b->id the profile) with
 * samples; *have 0 when the profile has no bins of that width.  fn's non-zero return stops
 * the walk and is returned. */
typedef int (*store_sumbins_sample_fn)(void *ctx, int64_t bin,
                                       int64_t samples);
int store_sumbins_samples(struct store_sumbins *s, const struct row_bins *b,
                          int *have, store_sumbins_sample_fn fn, void *ctx,
                          struct err *e);

/* One bin of a series (borrowed, valid during the call). */
struct store_sumbins_point {
	int64_t bin, samples;
	struct num min, max;
	int64_t min_ordinal, max_ordinal;
	const double *sum; /* the parts of the exact sum */
	size_t nsum;
};
typedef int (*store_sumbins_point_fn)(void *ctx,
                                      const struct store_sumbins_point *p);
/* The same for the bins of series b->id. */
int store_sumbins_points(struct store_sumbins *s, const struct row_bins *b,
                         int *have, store_sumbins_point_fn fn, void *ctx,
                         struct err *e);

#endif
