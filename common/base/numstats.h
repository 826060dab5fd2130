/*
 * numstats: the sequential statistics of a run of metric values (the
 * `metrics` kind's samples, min, max, mean, last and points_total),
 * accumulated in the order the values are given.  The query engine and the
 * build-time series summaries both use it, so a stored summary prints the
 * same bytes as a scan.
 */
#ifndef DSIGHT_NUMSTATS_H
#define DSIGHT_NUMSTATS_H

#include <stdint.h>

#include "base/buf.h"
#include "base/num.h"

/* A number kept beyond its row (big digits copied). */
struct numstats_held {
	struct num n;
	struct buf big;
};

struct numstats {
	int64_t samples;      /* non-null values */
	int64_t points_total; /* all values, nulls included */
	struct numstats_held min, max, last;
	double sum;           /* of the non-null values as doubles, in order */
};

void numstats_init(struct numstats *s);
void numstats_free(struct numstats *s);

/* Adds one value (NUM_NULL counts in points_total only).  min and max keep
 * the first of equal values. */
void numstats_add(struct numstats *s, const struct num *v);

/* True when a held number could not be copied (out of memory). */
int numstats_failed(const struct numstats *s);

/* Appends the value of one member: "samples", "min", "max", "mean" or
 * "last" (min, max, mean and last are null without samples; a non-finite
 * mean is null). */
void numstats_member(const struct numstats *s, const char *member,
                     struct buf *b);

/* Sets s (initialised) from stored parts: the counts, min, max and last as
 * their printed JSON (ignored when samples is 0) and the sum.  -1 when a
 * text is not a number or memory runs out. */
int numstats_set(struct numstats *s, int64_t samples, int64_t points_total,
                 const char *min, const char *max, const char *last,
                 double sum);

#endif
