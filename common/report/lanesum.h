/*
 * lanesum: lane summaries of the viewer (doc/report-files.md "NVTX summary
 * shards", lane summaries): multi-resolution bins per lane, nesting depth and bin that
 * keep the dominant names, written as detail shards of kind SHARD_SUMMARY
 * through the build's shard writer.  A lane is a track of ranges: a thread
 * for NVTX (nvtxsum), a (device, stream) for GPU kernels; the caller names
 * its lanes, this module only numbers them.
 *
 * Levels: level l has LANESUM_BINS0 * 8^l bins over [0, duration].  For
 * each (level, lane, depth, bin) and name: the ranges overlapping the bin
 * (count), their time inside it (total) and the part of that time from
 * ranges that do not cover the whole bin (inner).  Depths 0 ..
 * LANESUM_DEEPER - 1 are kept apart; every deeper range adds to depth
 * LANESUM_DEEPER ("deeper").  Names rank by total, then count, then index;
 * the first LANESUM_TOP are written.
 *
 * Memory: one group of lanes (a profile) at a time, at most
 * LANESUM_MAX_ENTRIES accumulators (about 64 MiB).  A group that needs
 * more loses its finest levels, one at a time, until the coarser fit (its
 * summary then has fewer levels; level 0 is always kept while it fits); a
 * group whose level 0 alone needs more, or with more than
 * LANESUM_MAX_LANES lanes, gets no bins.
 */
#ifndef DSIGHT_LANESUM_H
#define DSIGHT_LANESUM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "report/shard.h"

#define LANESUM_VERSION 2
#define LANESUM_LEVELS 3
#define LANESUM_BINS0 512
#define LANESUM_TOP 4
#define LANESUM_DEEPER 8 /* depth row of every range at depth >= 8 */
#define LANESUM_MAX_LANES 4096
#define LANESUM_MAX_NAME 0x3ffffffd
#define LANESUM_MAX_ENTRIES (3u << 19) /* 3/4 of 2^21 slots of 32 bytes */

struct lanesum;

/* A new, empty accumulator over [0, duration] (duration > 0 and finite);
 * NULL when out of memory.  Caller frees with lanesum_free. */
struct lanesum *lanesum_new(double duration);

/*
 * Adds the range [start, end] of lane (< LANESUM_MAX_LANES) at nesting
 * depth (>= 0; deeper than LANESUM_DEEPER folds) with name (-1: none, up
 * to LANESUM_MAX_NAME).  A range outside [0, duration] is ignored, others
 * are clipped to it.  Returns 0, or -1 when the group is over a bound
 * (bad lane or name, out of memory, too many accumulators): the group then
 * gets no bins, and further adds are ignored until lanesum_flush.  The
 * updates wait in a short queue (lanesum.c says why), so a bound an update
 * passes may be reported by a later add, or only by lanesum_flush (which
 * then writes no rows).
 */
int lanesum_add(struct lanesum *ls, size_t lane, int64_t depth, int64_t name,
                double start, double end);

/* Marks the group as over a bound: it gets no bins (the caller found a
 * range it cannot place). */
void lanesum_discard(struct lanesum *ls);

/*
 * Writes the group's bins into streams stream0 .. stream0 + LANESUM_LEVELS
 * - 1 of kind (SHARD_SUMMARY, SHARD_GPUSUM) of w (level l in stream0 + l), rows in bin order, then lane, then
 * depth: [bin, lane, depth, names, name, inner, total, count, ...] (up to
 * LANESUM_TOP names; times in seconds rounded to the microsecond), and
 * empties the accumulator for the next group.  *written is 1 when rows
 * were written, 0 for an empty group or one over a bound.
 */
int lanesum_flush(struct lanesum *ls, struct shard_writer *w,
                  enum shard_kind kind, int64_t stream0, int *written,
                  struct err *e);

/* The lane summary object of a flushed group (new reference): {version,
 * top, deeper, levels: [{bins, width, chunks}]} with the descriptors of w
 * (finished); the caller adds its lanes ("threads" or "tracks"). */
json_t *lanesum_json(double duration, const struct shard_writer *w,
                     enum shard_kind kind, int64_t stream0);

void lanesum_free(struct lanesum *ls);

#endif
