/*
 * store_gpu: GPU activity in trace-data.sqlite (doc/report-files.md "GPU
 * activity").
 *
 * Owns the extension tables STORE_GPU_TABLE (one row per kernel, memcpy or
 * memset with its launch link and projected NVTX range) and
 * STORE_GPU_NAMES (each profile's gpu.names), their indexes, the `gpu`
 * and `gpu_launches` views, a buffered row (copied on the producer
 * thread, inserted on the writer thread) and the per-profile GPU facts
 * the catalog carries (profiles[p].gpu).
 */
#ifndef DSIGHT_STORE_GPU_H
#define DSIGHT_STORE_GPU_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/row.h"

#define STORE_GPU_TABLE "dsight_gpu"
#define STORE_GPU_NAMES "dsight_gpu_names"

/* A GPU row waiting in a batch: launch_tid lives in the batch's text at
 * tid_off (row.launch_tid is NULL when there is no link). */
struct store_gpu_rec {
	int64_t profile, ordinal;
	struct row_gpu row;
	size_t tid_off;
};

/* Copies row into rec, its launch tid appended to text. */
void store_gpu_copy(struct store_gpu_rec *rec, int64_t profile,
                    int64_t ordinal, const struct row_gpu *row,
                    struct buf *text);

/* The insert statement of the writer thread (prepared by
 * store_gpu_prepare, finalized by the caller). */
int store_gpu_prepare(sqlite3 *db, sqlite3_stmt **st, struct err *e);

/* Inserts rec (its text in text). */
int store_gpu_insert(sqlite3 *db, sqlite3_stmt *st, const char *text,
                     const struct store_gpu_rec *rec, struct err *e);

/* The tables (created at open, empty when no export has GPU rows). */
extern const char store_gpu_schema_sql[];

/* After the load, inside the transaction: the names table from
 * catalog.profiles[].gpu.names and the views. */
int store_gpu_finish(sqlite3 *db, const json_t *catalog, struct err *e);

/* The indexes, built with the others after the commit. */
extern const char store_gpu_index_sql[];



/* A GPU row read back (row pointers valid during the call): nvtx_name is
 * the name index of its projected NVTX range (-1 none, or not asked). */
typedef int (*store_gpu_fn)(void *ctx, int64_t ordinal,
                            const struct row_gpu *row, int64_t nvtx_name);

/*
 * The GPU rows of profile in ordinal order (= start order: the rows are
 * stored so, and the scan reads the (profile, start) index); with a
 * window w (NULL: all) only those overlapping it (start <= w->end and
 * end >= w->start; max_duration, the profile's longest row, bounds the
 * index scan).  A cache without the
 * table has no rows.  fn's non-zero return stops the scan and is
 * returned; ERR_DATA on an SQLite failure.
 */
/*
 * How many GPU rows of profile store_gpu_rows would give for w (NULL:
 * all) into *out, without reading them: those starting inside w from the
 * (profile, start) index alone, then those starting up to max_duration
 * before w->start and ending inside it (a stored row never ends before it
 * starts: the import drops those as invalid).  0 without the table;
 * ERR_DATA on an SQLite failure.
 */
int store_gpu_count(sqlite3 *db, int64_t profile, const struct row_window *w,
                    double max_duration, int64_t *out, struct err *e);

int store_gpu_rows(sqlite3 *db, int64_t profile, const struct row_window *w,
                   double max_duration, int with_nvtx_name, store_gpu_fn fn,
                   void *ctx, struct err *e);

/* The kernels launched on thread tid (global tid text) of profile while a
 * range [start, end] was open (launch_start within it): *count, their
 * earliest start, latest end and the length of the union of their
 * intervals (*busy); *count = 0 and the rest 0 when none. */
struct store_gpu_span {
	int64_t count;
	double start, end, busy;
};
int store_gpu_projected(sqlite3 *db, int64_t profile, const char *tid,
                        size_t tid_len, double start, double end,
                        struct store_gpu_span *out, struct err *e);

/* The whole-run summary per (profile, GPU name) of the rows inside
 * [0, duration] (count, exact sum of durations, maximum), written by
 * store_gpukeys_summarize (the keys merged). */
#define STORE_GPU_SUM_NAMES "dsight_gpu_sum_names"

/* The summary rows of profile: fn(ctx, name, count, parts, nparts, max)
 * with the exact sum's parts; *have 0 when the cache has no summary (fn
 * not called).  fn's non-zero return stops and is returned. */
typedef int (*store_gpu_sum_fn)(void *ctx, int64_t name, int64_t count,
                                const double *parts, size_t nparts,
                                double max);
int store_gpu_sum_names(sqlite3 *db, int64_t profile, double duration,
                        int *have, store_gpu_sum_fn fn, void *ctx,
                        struct err *e);

/* The whole-run per-second bins of each profile's kernels per device
 * (bin j = [j, j + 1], closed as the timeline's overlap): kernels
 * overlapping it and the exact length of the device's kernel union inside
 * it, written with the name summary (non-empty bins only). */
#define STORE_GPU_SUM_BINS "dsight_gpu_sum_bins"
/* After the load (the rows committed): writes STORE_GPU_SUM_BINS, one
 * pass over the kernels in (profile, ordinal) order.  0 or ERR_*. */
int store_gpu_summarize_bins(sqlite3 *db, double duration, struct err *e);
typedef int (*store_gpu_bin_fn)(void *ctx, int64_t device, int64_t bin,
                                int64_t kernels, const double *parts,
                                size_t nparts);
/* The bins of profile with bin < below, in (device, bin) order; *have as
 * store_gpu_sum_names. */
int store_gpu_sum_bins(sqlite3 *db, int64_t profile, double duration,
                       int64_t below, int *have, store_gpu_bin_fn fn,
                       void *ctx, struct err *e);
#endif
