/*
 * gpusum: the GPU summaries of the viewer (doc/report-files.md "GPU
 * shards"): per profile, lane summaries (report/lanesum.h) whose lanes are
 * the profile's GPU tracks, one per (device, stream), every row at depth
 * 0, written as detail shards of kind SHARD_GPUSUM through the build's
 * shard writer from one scan of the staged dsight_gpu table.
 *
 * A profile without GPU rows costs nothing: the scan runs only when the
 * catalog names a profile with a `gpu` object.  A profile with more than
 * LANESUM_MAX_LANES tracks or over the lane summary's bounds gets no bins
 * (the viewer then draws exact rows only, and says so beyond the budget).
 */
#ifndef DSIGHT_GPUSUM_H
#define DSIGHT_GPUSUM_H

#include <jansson.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/err.h"
#include "report/lanesum.h"
#include "report/shard.h"

#define GPUSUM_NAMES LANESUM_LEVELS       /* stream of the per-name sums */
#define GPUSUM_BINS (LANESUM_LEVELS + 1)  /* stream of the per-second bins */
#define GPUSUM_STREAMS (LANESUM_LEVELS + 2)

struct gpusum;

/*
 * Scans the staged cache at sqlite_path (dsight_gpu in (profile, ordinal)
 * order) for the profiles of catalog that have GPU rows and adds the
 * summary rows to w (not finished yet), then copies the cache's whole-run
 * GPU summaries of this duration (store_gpu_sum_names, store_gpu_sum_bins)
 * into the names and bins streams: [name, count, max, [duration parts]]
 * and [device, bin, kernels, [busy parts]].  duration is meta.duration.  On
 * success *out (caller frees with gpusum_free) keeps each profile's tracks.
 */
int gpusum_build(struct gpusum **out, struct shard_writer *w,
                 const char *sqlite_path, const json_t *catalog,
                 double duration, const cancel_flag *cancel,
                 struct err *e);

/*
 * Profile p's "gpu_summary" object for the core catalog (new reference):
 * the lane summary with "tracks": [{device, stream, name}] (lane k is
 * tracks[k]; name: the device's name in profile's gpu.devices, null when
 * unknown; profile borrowed) and the descriptors of w (finished), both
 * only when binned, "queue_delay": [min, max] of its kernels' start -
 * launch_start (absent when no kernel has a launch), and "names" and
 * "bins" (descriptors) when the cache had those summaries; NULL when the
 * profile has no GPU rows.
 */
json_t *gpusum_profile_json(const struct gpusum *s,
                            const struct shard_writer *w, size_t p,
                            const json_t *profile);

void gpusum_free(struct gpusum *s);

#endif
