/*
 * store_gpukeys: the whole-run GPU summary by key (doc/report-files.md
 * "GPU activity"): per profile, GPU name, kind, device, stream and the
 * name of the projected NVTX range, the rows inside [0, duration] (count,
 * exact sum of durations, maximum).  Every whole-run `gpu --group-by`
 * (name, device, stream, gpu_kind, nvtx), with or without a device,
 * stream, kind or name filter, is a merge of these rows plus the few rows
 * across the run's edges.
 *
 * Owns the table STORE_GPUKEYS_TABLE, the one pass over the GPU rows that
 * collects it (the projected ranges' names read from `events` once per
 * profile), its write and its read, and the write of the name summary
 * (STORE_GPU_SUM_NAMES, the keys merged).
 */
#ifndef DSIGHT_STORE_GPUKEYS_H
#define DSIGHT_STORE_GPUKEYS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/qsum.h"

#define STORE_GPUKEYS_TABLE "dsight_gpu_sum_keys"

/* A key column's NULL (a row with no device or stream, no projected
 * range, or a range without a name). */
#define STORE_GPUKEYS_NULL INT64_MIN

/* One key: name is the gpu_names index, nvtx_name the profile's NVTX
 * names index of the projected range. */
struct store_gpukey {
	int64_t profile, name, kind, device, stream, nvtx_name;
	int64_t count;
	struct qsum duration;
	double max;
};

/*
 * After the load (the rows committed): one pass over the GPU rows in
 * table order collects the keys of the rows inside [0, duration]; writes
 * them to STORE_GPUKEYS_TABLE, their merge per (profile, name) to
 * STORE_GPU_SUM_NAMES, then the per-second bins
 * (store_gpu_summarize_bins).  0, ERR_NOMEM or ERR_DATA (e filled).
 */
int store_gpukeys_summarize(sqlite3 *db, double duration, struct err *e);

/* The keys of profile: fn(ctx, key, parts, nparts) per row (key and
 * parts borrowed for the call; key->duration is empty, parts hold the
 * exact sum).  *have 0 when the cache has no such summary or it was made
 * for another duration (fn may have been called: the caller starts
 * again without it).  fn's non-zero return stops and is returned. */
typedef int (*store_gpukeys_fn)(void *ctx, const struct store_gpukey *key,
                                const double *parts, size_t nparts);
int store_gpukeys_read(sqlite3 *db, int64_t profile, double duration,
                       int *have, store_gpukeys_fn fn, void *ctx,
                       struct err *e);

#endif
