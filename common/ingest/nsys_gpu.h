/*
 * nsys_gpu: the GPU activity of one Nsight export (doc/nsight-import.md
 * "GPU activity").
 *
 * Owns which CUPTI tables and columns an export has (matched by name; a
 * missing column is null and warned about), the NVTX projection (the
 * innermost range open on the launching thread when the call started: the
 * runtime calls and the ranges, both in start order, merged) and the
 * stream of GPU rows in (start, end, kind, rowid) order (each table read
 * in order by nsys_runs, the three merged here) with their name
 * dictionary and launch link (nsys_launch).  Memory does not grow with
 * the row count: only the per-thread stacks of open ranges, the launch
 * window and the dictionaries are held.
 */
#ifndef DSIGHT_NSYS_GPU_H
#define DSIGHT_NSYS_GPU_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"
#include "ingest/nsys_export.h"

struct nsys_gpu;

/* Looks the export's GPU tables up and, when it has GPU rows to import,
 * starts the projection (the runtime calls in start order).  *out is
 * owned by the caller (nsys_gpu_close); it is a no-op object when the
 * export has no GPU table.  file names the export in warnings. */
int nsys_gpu_open(const struct nsys_export *x, const char *file,
                  int64_t origin_ns, struct nsys_gpu **out, struct err *e);

/* Called with every imported NVTX range in stored order (start, end
 * descending, rowid): ordinal is its index in the profile; has_tid = 0 for
 * a range without a thread. */
int nsys_gpu_range(struct nsys_gpu *g, int64_t start, int64_t end,
                   int has_tid, int64_t gtid, int64_t ordinal,
                   struct err *e);

struct nsys_gpu_out {
	json_t *gpu;      /* new reference: the profile's `gpu` object, or
	                     NULL when no GPU row was imported */
	json_t *names;    /* new reference: its `gpu_names` (with gpu) */
	json_t *warnings; /* new reference: sentences (array, maybe empty) */
	uint64_t rows, invalid, invalid_text;
	int truncated;
};

/* Ends the projection and streams the GPU rows of profile profile_id to
 * sink (at most max_rows when >= 0). */
int nsys_gpu_stream(struct nsys_gpu *g, const struct row_sink *sink,
                    int64_t profile_id, int64_t max_rows,
                    struct nsys_gpu_out *out, struct err *e);

void nsys_gpu_close(struct nsys_gpu *g);

#endif
