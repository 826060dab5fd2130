/*
 * nvtxsum: the NVTX summaries of the viewer (doc/report-files.md "NVTX
 * summary shards"): per profile, per thread, multi-resolution bins that
 * keep the dominant names, and the exact per-name whole-run sums of the
 * SQLite cache (dsight_summary_names), and its whole-run CPU samples per
 * stack (dsight_summary_stacks), written as detail shards of kind
 * SHARD_SUMMARY through the build's shard writer.
 *
 * The bins are lane summaries (report/lanesum.h) whose lanes are the
 * profile's threads (the tid text, in order of first range) and whose
 * depth is nvtx.depth (store/store_depth.h); the threads' names come from
 * nvtx.thread_name.  A profile with a range without tid, with more than
 * NVTXSUM_MAX_THREADS threads or over the lane summary's bounds gets no
 * bins (the viewer shows its density).
 */
#ifndef DSIGHT_NVTXSUM_H
#define DSIGHT_NVTXSUM_H

#include <jansson.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/err.h"
#include "report/shard.h"

#include "report/lanesum.h"

#define NVTXSUM_LEVELS LANESUM_LEVELS
#define NVTXSUM_STREAMS (NVTXSUM_LEVELS + 2) /* + names, CPU stacks */
#define NVTXSUM_MAX_THREADS LANESUM_MAX_LANES

struct nvtxsum;

/*
 * Scans the staged cache at sqlite_path (events in (profile, ordinal)
 * order, then dsight_summary_names) and adds the summary rows to w, which
 * must not be finished yet.  duration is meta.duration (> 0).  On success
 * *out (caller frees with nvtxsum_free) keeps each profile's thread list.
 */
int nvtxsum_build(struct nvtxsum **out, struct shard_writer *w,
                  const char *sqlite_path, double duration, size_t nprofiles,
                  const cancel_flag *cancel, struct err *e);

/*
 * Profile p's "nvtx_summary" object for the core catalog (new reference),
 * with the descriptors of w (finished); NULL when the profile has neither
 * bins nor names.
 */
json_t *nvtxsum_profile_json(const struct nvtxsum *s,
                             const struct shard_writer *w, size_t p);

/* Profile p's whole-run CPU stack counts (descriptors, new reference) for
 * its cpu.stack_sums; NULL when the cache had none. */
json_t *nvtxsum_cpu_json(const struct nvtxsum *s, const struct shard_writer *w,
                         size_t p);

void nvtxsum_free(struct nvtxsum *s);

#endif
