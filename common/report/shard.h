/*
 * shard: the detail shards of a report (doc/report-files.md "Detail shards") and the
 * 512-bin density overviews.
 *
 * A shard writer is an evidence sink: the build tees the streamed rows
 * (NVTX events and CPU samples per profile, points per series) into it.
 * Rows are formatted as compact JSON (the same text as the SQLite payloads),
 * cut into shards by the rule below, gzip-compressed (zero mtime, so equal
 * content gives equal bytes), hashed (SHA-256 of the compressed and of the
 * decoded bytes) and written as <dir>/<sha256-of-compressed>.json.gz.
 * Compression, hashing and writing run on a second thread fed through a
 * bounded queue, so the parsing thread keeps going.
 *
 * Cut rule: at most SHARD_MAX_ROWS rows and SHARD_MAX_DECODED bytes of
 * decoded JSON, counted as 2 (brackets) + the sum over rows of (UTF-8
 * length + 1).  Before appending a row, the shard is flushed when it is
 * non-empty and either limit would be exceeded; a single row over the budget
 * is kept whole in a shard of its own.  A stream's last shard is flushed
 * when the next stream starts (document order never resumes a stream) or at
 * shard_writer_finish.
 *
 * Density: for profile p, 512 bins over [0, duration]; every event with
 * start <= duration and end >= 0 adds 1 to each bin from
 * floor(start*512/duration) to floor(end*512/duration), both clamped to
 * [0, 511].  Computed while events stream when the duration is known before
 * the first event (shard_writer_set_duration), else afterwards by
 * shard_density_from_db over the staged SQLite events table.
 */
#ifndef DSIGHT_SHARD_H
#define DSIGHT_SHARD_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/row.h"

#define SHARD_MAX_ROWS 8192u
#define SHARD_MAX_DECODED (512u * 1024u)
#define SHARD_DENSITY_BINS 512
/* libdeflate level 1 (base/gz.h).  Measured on the shards of the medium and
 * large reports, CPU time of one core: zlib level 2 (used before) deflated
 * 97-122 MB/s to 33.5% (large) and 26.0% (medium) of the decoded size;
 * libdeflate 1 deflates 229-263 MB/s to 31.5% and 24.4%, its level 2
 * 115-146 MB/s to 30.0% and 23.1%.  The build runs three busy threads on two
 * cores, so deflate CPU is build time: level 1 halves it and still writes
 * fewer bytes than before.  Shard names depend on it (and on libdeflate's
 * version), so a change renames every shard. */
#define SHARD_GZIP_LEVEL 1

/* SHARD_SUMMARY: the NVTX summaries of the viewer (report/nvtxsum.h),
 * stream index = profile * NVTXSUM_STREAMS + level (or the names stream);
 * SHARD_SERIESSUM: the metric summaries (report/seriessum.h), stream 0;
 * SHARD_GPU: GPU rows per profile (shard_writer_gpu); SHARD_GPUSUM: their
 * lane summaries (report/gpusum.h), stream profile * GPUSUM_STREAMS + level. */
enum shard_kind { SHARD_EVENTS = 0, SHARD_SAMPLES = 1, SHARD_POINTS = 2,
                  SHARD_SUMMARY = 3, SHARD_SERIESSUM = 4, SHARD_GPU = 5,
                  SHARD_GPUSUM = 6, SHARD_KINDS = 7 };

struct shard_desc {
	char sha256[65];         /* of the compressed bytes; also the name */
	char decoded_sha256[65]; /* of the decoded JSON text */
	uint64_t bytes;          /* compressed size */
	uint64_t decoded_bytes;  /* decoded size */
	uint64_t count;          /* rows */
	double bounds[4];        /* min_start, min_end, max_start, max_end */
};

struct shard_writer;

struct shard_writer_opts {
	const char *dir; /* existing directory the shard files go to */
	int threads;     /* 0: compress on the caller's thread; 1: a worker */
	int level;       /* gzip level; 0 means SHARD_GZIP_LEVEL */
};

/*
 * Creates a writer (caller frees it with shard_writer_free).  The
 * directory path is copied.  Starts the worker thread when asked.
 */
int shard_writer_open(struct shard_writer **out,
                      const struct shard_writer_opts *opts, struct err *e);

/*
 * The run duration (meta.duration, > 0).  When given before the first event
 * the density is computed while events stream; otherwise
 * shard_writer_has_density stays 0.
 */
void shard_writer_set_duration(struct shard_writer *w, double duration);

/* Fills *sink with the writer's event/sample/point/gpu callbacks (ctx =
 * w, progress NULL). */
void shard_writer_sink(struct shard_writer *w, struct row_sink *sink);

/* The sink callbacks, callable directly (a tee calls them in turn). */
int shard_writer_event(void *w, int64_t profile, int64_t ordinal,
                       const struct row_event *row, struct err *e);
int shard_writer_sample(void *w, int64_t profile, int64_t ordinal,
                        const struct row_sample *row, struct err *e);
int shard_writer_point(void *w, int64_t series, int64_t ordinal,
                       const struct row_point *row, struct err *e);
/* A GPU row of profile (doc/report-files.md "GPU shards"): [start, end,
 * kind, device, stream, name, correlation, launch_tid, launch_start,
 * launch_name, nvtx, source_row, short_name, bytes, grid x y z, block x y
 * z, registers, static_smem, dynamic_smem, graph_node]. */
int shard_writer_gpu(void *w, int64_t profile, int64_t ordinal,
                     const struct row_gpu *row, struct err *e);

/* The shard text of GPU row r (as shard_writer_gpu writes it) into b
 * (reset first). */
void shard_gpu_text(struct buf *b, const struct row_gpu *r);

/* Appends one row given as its compact JSON text (text copied), with its
 * time bounds (start = end for samples and points); no density. */
int shard_writer_add_text(struct shard_writer *w, enum shard_kind kind,
                          int64_t index, double start, double end,
                          const char *text, size_t len, struct err *e);

/*
 * Compresses, hashes and writes one shard whose decoded JSON text is
 * data[0..len) (borrowed) as dir/<sha256>.json.gz (kept when already
 * there); fills d's sha256, decoded_sha256, bytes and decoded_bytes (count
 * and bounds are the caller's).  One-shot: no writer needed.
 */
int shard_write_text(const char *dir, const char *data, size_t len,
                     struct shard_desc *d, struct err *e);

/*
 * The same through w's worker (w opened with threads = 1): hands data
 * (malloc'd, taken: freed by w, also on failure) to the queue, blocking
 * while it is full.  d (borrowed) gets the names and sizes when the worker
 * has written it, so it must stay valid and unread until
 * shard_writer_finish; an error of the worker is returned by a later call
 * or by shard_writer_finish.
 */
int shard_writer_submit(struct shard_writer *w, char *data, size_t len,
                        struct shard_desc *d, struct err *e);

/*
 * Flushes every open shard, waits for the worker and reports its first
 * error.  After it, the query functions below may be called.
 */
int shard_writer_finish(struct shard_writer *w, struct err *e);

/* Stops the worker (if running) and frees everything.  NULL is fine. */
void shard_writer_free(struct shard_writer *w);

/*
 * The descriptors of one stream (kind, profile/series index), in row
 * order; *n = 0 for a stream that had no rows.  Valid until free.
 */
const struct shard_desc *const *shard_writer_descs(const struct shard_writer *w,
                                                   enum shard_kind kind,
                                                   int64_t index, size_t *n);

/* One descriptor as a new JSON object (doc/report-files.md field order). */
json_t *shard_desc_json(const struct shard_desc *d);
/* Sets o's url, sha256, decoded_sha256, bytes and decoded_bytes from d
 * (the first five keys of shard_desc_json; set again, a key keeps its
 * place).  Returns 0, or non-zero when out of memory. */
int shard_desc_set_names(json_t *o, const struct shard_desc *d);

/* A stream's descriptors as a new JSON array (empty when none). */
json_t *shard_writer_descs_json(const struct shard_writer *w,
                                enum shard_kind kind, int64_t index);

/* Total shards, and the sorted, de-duplicated relative paths
 * ("detail/<sha>.json.gz") of every shard file, as a new JSON array. */
size_t shard_writer_total(const struct shard_writer *w);
json_t *shard_writer_files(const struct shard_writer *w);
/* Sum of compressed sizes over distinct files. */
uint64_t shard_writer_bytes(const struct shard_writer *w);

/* 1 when the density was computed in-stream (duration known in time). */
int shard_writer_has_density(const struct shard_writer *w);
/* Copies profile p's bins (zeros for a profile without events). */
void shard_writer_density(const struct shard_writer *w, int64_t profile,
                          uint64_t out[SHARD_DENSITY_BINS]);

/* Widens the descriptor bounds b (min start, min end, max start, max end)
 * to cover [start, end]; first: b holds nothing yet, and is set. */
void shard_bounds_add(double b[4], int first, double start, double end);

/* Adds one event to bins per the rule above (duration > 0). */
void shard_density_add(uint64_t bins[SHARD_DENSITY_BINS], double duration,
                       double start, double end);

/*
 * Computes every profile's density from the `events` table of an open
 * store: bins holds nprofiles * SHARD_DENSITY_BINS counters, zeroed here.
 * Rows of profiles >= nprofiles are an error.
 */
int shard_density_from_db(sqlite3 *db, double duration, size_t nprofiles,
                          uint64_t *bins, struct err *e);

#endif
