/*
 * row: the rows that grow with a capture, and the sink they travel through.
 *
 * Three row kinds (doc/evidence-document.md "Row shapes"): an NVTX event
 * [start, end, name_index, global_tid, source_row], a CPU sample [time,
 * global_tid, stack_index, source_row] and a metric point [time, value,
 * source_id, source_row].  Every reader hands them to a struct row_sink
 * (the evidence parser, the Nsight importer) and every writer is one (the
 * SQLite store, the shard writer, the in-memory backend), so no module
 * depends on another to trade rows.  The row-callback types of the two
 * query backends (store, dataset) are the row_*_fn below.  Also the
 * duration bucket of an event, shared by the cache and the in-memory
 * backend.
 */
#ifndef DSIGHT_ROW_H
#define DSIGHT_ROW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/cancel.h"
#include "base/err.h"
#include "base/num.h"

/* The catalog collections (catalog streaming): the top-level arrays whose
 * elements a sink with an `element` callback receives one at a time. */
enum evidence_collection {
	EVIDENCE_REQUESTS,
	EVIDENCE_SESSIONS,
	EVIDENCE_SERVER_SPANS,
	EVIDENCE_ITERATIONS,
	EVIDENCE_NCOLLECTIONS
};

/* The top-level key of collection c ("requests", ...). */
const char *evidence_collection_key(enum evidence_collection c);

/* A time window; rows are selected inclusively (each reader says how).
 * Readers take a pointer: NULL means the whole run. */
struct row_window {
	double start, end;
	/* Hint: the window covers much of the run, so a backend may walk the
	 * rows sequentially rather than through its window index (same rows,
	 * same order guarantees either way). */
	int wide;
};

/* The summary bins i0..i1-1 of width `width` seconds (bin i is
 * [i*width, (i+1)*width)) of one profile or series, `id`. */
struct row_bins {
	int64_t id;
	double width;
	int64_t i0, i1;
};

/* profiles[p].events[k] = [start, end, name_index, global_tid, source_row] */
struct row_event {
	double start, end;
	int64_t name;
	const char *tid; /* global_tid text, not NUL-terminated */
	size_t tid_len;
	int64_t source_row;
};

/* A range known by its name and times only (one a build-time summary
 * lists): empty tid, no source row. */
struct row_event row_event_of(int64_t name, double start, double end);

/* profiles[p].cpu.samples[k] = [time, global_tid, stack_index, source_row] */
struct row_sample {
	double time;
	const char *tid;
	size_t tid_len;
	int64_t stack;
	int64_t source_row;
};

/* metrics[s].points[k] = [time, value, source_id, source_row] */
struct row_point {
	double time;
	struct num value; /* NUM_NULL for null; NUM_BIG keeps exact digits */
	int64_t source_id;
	int64_t source_row;
	/* The row's JSON text as row_point_print writes it, when a tee printed
	 * it once for all its sinks (sink_tee.h), else NULL; the value's text
	 * is text[value_off .. value_off + value_len).  Borrowed for the call. */
	const char *text;
	size_t text_len, value_off, value_len;
};

/*
 * Appends sample r's JSON text, [time,"tid",stack,source_row] (the cache's
 * payload and the detail shards' row), to b; *tid_off and *tid_len, when
 * not NULL, get the place of the tid's JSON string in b.  b->failed tells
 * an unprintable time (not finite: ERR_DATA) or memory.
 */
void row_sample_print(struct buf *b, const struct row_sample *r,
                      size_t *tid_off, size_t *tid_len);

/*
 * Appends point r's JSON text, [time,value,source_id,source_row] (the
 * cache's payload and the detail shards' row), to b: r->text when set,
 * else printed.  *value_off and *value_len, when not NULL, get the place
 * of the value's text in b.  b->failed tells an unprintable time (not
 * finite: ERR_DATA) or memory.
 */
void row_point_print(struct buf *b, const struct row_point *r,
                     size_t *value_off, size_t *value_len);

/* A GPU activity row of an Nsight profile (doc/nsight-import.md "GPU
 * activity"): a kernel, memcpy or memset with its launch link and the NVTX
 * range it is projected onto.  Integers in v[] are null when their bit in
 * nulls is set. */
enum row_gpu_kind { ROW_GPU_KERNEL, ROW_GPU_MEMCPY, ROW_GPU_MEMSET };
enum row_gpu_int {
	ROW_GPU_DEVICE, ROW_GPU_STREAM, ROW_GPU_CORRELATION,
	ROW_GPU_BYTES, ROW_GPU_GRID_X, ROW_GPU_GRID_Y, ROW_GPU_GRID_Z,
	ROW_GPU_BLOCK_X, ROW_GPU_BLOCK_Y, ROW_GPU_BLOCK_Z, ROW_GPU_REGISTERS,
	ROW_GPU_STATIC_SMEM, ROW_GPU_DYNAMIC_SMEM, ROW_GPU_GRAPH_NODE,
	ROW_GPU_NINT
};
struct row_gpu {
	int kind;            /* enum row_gpu_kind */
	double start, end;
	int64_t name;        /* index in the profile's gpu.names */
	int64_t short_name;  /* index in gpu.names, -1 null */
	int64_t v[ROW_GPU_NINT];
	uint32_t nulls;      /* bit i: v[i] is null */
	const char *launch_tid; /* NULL: no launch link; else global tid text */
	size_t launch_tid_len;
	double launch_start;
	int64_t launch_name; /* index in gpu.names, -1 null */
	int64_t nvtx;        /* projected range's ordinal, -1 null */
	int64_t source_row;  /* rowid in its CUPTI table */
};

/*
 * Where streamed rows go.  Every callback may be NULL.  Rows arrive in
 * document order; `ordinal` is the zero-based index in the row's array and
 * `profile`/`series` the index of the enclosing profile/series.  Row
 * pointers (and the strings/big-integer text they point to) are valid only
 * during the call.  A callback returns 0, or an ERR_* code with e filled to
 * abort the read.
 */
struct row_sink {
	void *ctx;
	int (*event)(void *ctx, int64_t profile, int64_t ordinal,
	             const struct row_event *row, struct err *e);
	int (*sample)(void *ctx, int64_t profile, int64_t ordinal,
	              const struct row_sample *row, struct err *e);
	int (*point)(void *ctx, int64_t series, int64_t ordinal,
	             const struct row_point *row, struct err *e);
	/* Progress: compressed/input bytes consumed so far and the input size
	 * (0 when unknown). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	/* Optional: the read stops (ERR_DATA "interrupted") soon after *cancel
	 * becomes non-zero, also where no row arrives for a while (between
	 * chunks of the document, inside long SQL scans of an export). */
	const cancel_flag *cancel;
	/* Catalog streaming: when set, each element of requests, sessions,
	 * server_spans and iterations (when that key holds an array) is
	 * validated, handed over here once complete (borrowed, valid during
	 * the call) and dropped: the returned catalog keeps the key with an
	 * empty array.  When NULL the elements stay in the catalog. */
	int (*element)(void *ctx, enum evidence_collection c, int64_t ordinal,
	               const json_t *elem, struct err *e);
	/* GPU rows of profile `profile` in (start, end, kind, source) order. */
	int (*gpu)(void *ctx, int64_t profile, int64_t ordinal,
	           const struct row_gpu *row, struct err *e);
};

/* A query backend's row callback (one profile or series at a time):
 * returns 0 to go on, non-zero to stop the scan. */
typedef int (*row_event_fn)(void *ctx, int64_t ordinal,
                            const struct row_event *row);
typedef int (*row_sample_fn)(void *ctx, int64_t ordinal,
                             const struct row_sample *row);
typedef int (*row_point_fn)(void *ctx, int64_t ordinal,
                            const struct row_point *row);

/* The duration bucket of an event (doc/report-files.md "Tables"):
 * ceil(log2(max(end - start, 1e-9))), clamped to
 * [ROW_BUCKET_MIN, ROW_BUCKET_MAX]; a zero-length, reversed or NaN
 * duration is ROW_BUCKET_MIN, an infinite one ROW_BUCKET_MAX. */
#define ROW_BUCKET_MIN (-29)
#define ROW_BUCKET_MAX 1025
int row_bucket(double start, double end);

#endif
