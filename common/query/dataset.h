/*
 * dataset: open any dataset behind one backend interface.
 *
 * A dataset is a report directory (prefers trace-data.sqlite, else
 * trace-data.json.gz), an explicit SQLite cache (recognised by its header),
 * or an evidence document (plain JSON or gzip, by magic).  Two backends:
 * SQLite (read-only URI; only the catalog row is loaded; rows come from the
 * indexes) and in-memory (the document's rows held in compact arrays).
 * Both hand the query engine the same catalog tree and the same rows.
 */
#ifndef DSIGHT_DATASET_H
#define DSIGHT_DATASET_H

#include <jansson.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/row.h"
#include "base/fileid.h"
#include "store/store_coll.h"
#include "store/store_gpu.h"
#include "store/store_gpukeys.h"
#include "store/store_sumbins.h"
#include "store/store_sumnames.h"

struct dataset;

/* Opens path.  On success *out is owned by the caller (dataset_close).
 * ERR_DATA with a clear message for a missing/unknown/corrupt file, and
 * "Unsupported DSight SQLite version: N; expected 1" for a wrong cache. */
int dataset_open(const char *path, struct dataset **out, struct err *e);

/* Opens a second handle on the same data that shares the catalog (and, for
 * the in-memory backend, the rows): for worker threads, one handle per
 * thread.  Owned by the caller; may outlive ds. */
int dataset_clone(struct dataset *ds, struct dataset **out, struct err *e);

void dataset_close(struct dataset *ds);

/* The catalog tree (borrowed; valid while the handle is open). */
const json_t *dataset_catalog(const struct dataset *ds);
/* The generation id: the cache's, or the first 32 hex digits of the
 * SHA-256 of the document file for a dataset without a cache. */
const char *dataset_generation(const struct dataset *ds);
/* The absolute path of the data file actually read (whose file identity
 * tells a rebuild). */
const char *dataset_data_path(const struct dataset *ds);

/* True when the data file is a SQLite cache (the sql kind needs one). */
int dataset_has_cache(const struct dataset *ds);

/* The identity (device, inode, size, mtime, ctime) of the data file as it
 * was when opened: compare it with fileid_get(dataset_data_path(ds)) to
 * notice a rebuild (the daemon and the MCP server do).  Borrowed. */
const struct fileid *dataset_fileid(const struct dataset *ds);

/* Re-reads the stored generation (SQLite) and fails with ERR_REBUILT
 * "DSight dataset was rebuilt; reopen it before querying" if it changed.
 * Always 0 for the in-memory backend. */
int dataset_check_generation(struct dataset *ds, struct err *e);

/* Row callbacks (row_event_fn, ... of base/row.h): return 0 to continue,
 * anything else stops the scan and is returned by the iterating function.
 * Row pointers live during the call. */

/* Events of one profile overlapping w (start <= w.end && end >= w.start),
 * in no particular order; w == NULL: every event in ordinal order.  The
 * SQLite backend uses the durations lower-bound scan of
 * doc/query-semantics.md "nsys". */
/* GPU rows of one profile (store_gpu.h: ordinal order; w: overlapping
 * it; max_duration the profile's gpu.max_duration).  The in-memory backend
 * (an evidence document, a --single-file report) has none: ERR_USAGE
 * DATASET_NO_GPU_ROWS, as callers ask only for a profile whose catalog
 * says it has GPU rows. */
#define DATASET_NO_GPU_ROWS \
	"this report's GPU rows are kept only in its SQLite cache, which an " \
	"evidence document or a --single-file report does not have: query " \
	"a report built without --single-file"

int dataset_gpu_rows(struct dataset *ds, int64_t profile,
                     const struct row_window *w, double max_duration,
                     int with_nvtx_name, store_gpu_fn fn, void *ctx,
                     struct err *e);
/* How many rows dataset_gpu_rows would give for w, without reading them
 * (store_gpu_count); the same error without a cache. */
int dataset_gpu_count(struct dataset *ds, int64_t profile,
                      const struct row_window *w, double max_duration,
                      int64_t *out, struct err *e);
/* The kernels projected onto an NVTX range (store_gpu_projected); none
 * for the in-memory backend. */
int dataset_gpu_projected(struct dataset *ds, int64_t profile,
                          const char *tid, size_t tid_len, double start,
                          double end, struct store_gpu_span *out,
                          struct err *e);
/* The whole-run GPU summary of profile by name (store_gpu_sum_names);
 * *have 0 without summaries (in memory, disabled, absent). */
int dataset_gpu_sum_names(struct dataset *ds, int64_t profile,
                          double duration, int *have, store_gpu_sum_fn fn,
                          void *ctx, struct err *e);
/* The whole-run GPU summary of profile by key (store_gpukeys_read);
 * *have 0 without it (in memory, disabled, absent, another duration). */
int dataset_gpu_sum_keys(struct dataset *ds, int64_t profile,
                         double duration, int *have, store_gpukeys_fn fn,
                         void *ctx, struct err *e);
/* The whole-run per-second GPU bins of profile below bin `below`
 * (store_gpu_sum_bins); *have 0 without summaries. */
int dataset_gpu_sum_bins(struct dataset *ds, int64_t profile,
                         double duration, int64_t below, int *have,
                         store_gpu_bin_fn fn, void *ctx, struct err *e);
int dataset_events(struct dataset *ds, int64_t profile,
                   const struct row_window *w, row_event_fn fn,
                   void *ctx, struct err *e);
/* The one event (profile, ordinal), if it exists (fn not called
 * otherwise). */
int dataset_event_at(struct dataset *ds, int64_t profile, int64_t ordinal,
                     row_event_fn fn, void *ctx, struct err *e);
/* Samples of one profile with w.start <= time <= w.end, ordinal order
 * (w == NULL: all). */
int dataset_samples(struct dataset *ds, int64_t profile,
                    const struct row_window *w, row_sample_fn fn,
                    void *ctx, struct err *e);
/* Points of one series with w.start <= time <= w.end, ordinal order
 * (w == NULL: all). */
int dataset_points(struct dataset *ds, int64_t series,
                   const struct row_window *w, row_point_fn fn,
                   void *ctx, struct err *e);
/* Every point of the series at the latest timestamp strictly before t, in
 * ordinal order (none when there is no earlier point). */
int dataset_points_before(struct dataset *ds, int64_t series, double t,
                          row_point_fn fn, void *ctx, struct err *e);

/*
 * The catalog collections (requests, sessions, server_spans, iterations):
 * in the catalog tree (in-memory backend, a cache without dsight's
 * extension) or in the cache's extension tables.  Element pointers are
 * valid during the callback only: json_incref one to keep it.
 */
typedef int (*dataset_elem_fn)(void *ctx, int64_t ordinal, const json_t *el);

/* The number of elements of collection c. */
int64_t dataset_count(const struct dataset *ds, enum evidence_collection c);
/* Every element of c in stored order; fn's non-zero return stops the walk
 * and is returned. */
int dataset_foreach(struct dataset *ds, enum evidence_collection c,
                    dataset_elem_fn fn, void *ctx, struct err *e);
/* The request with this id: *out a new reference, NULL when unknown. */
int dataset_find_request(struct dataset *ds, const char *id, json_t **out,
                         struct err *e);
/* The distinct strings of a collection's member, in first-seen order
 * (stored order, then array order): the names a filter can match. */
enum dataset_names {
	DATASET_REQUEST_SESSIONS = SN_REQ_SESSION,
	DATASET_REQUEST_AGENTS = SN_REQ_AGENT,
	DATASET_REQUEST_WORKERS = SN_REQ_WORKER,
	DATASET_SESSION_IDS = SN_SESS_ID,
	DATASET_SESSION_AGENTS = SN_SESS_AGENT
};
int dataset_names(struct dataset *ds, enum dataset_names which,
                  int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
                  struct err *e);

/*
 * A selection answered by the backend (store_coll.h: filters, sort and
 * page in SQL, exactly as the engine's own code would answer): *total, the
 * page through fn, *unaligned for iterations.  DATASET_FALLBACK when the
 * backend cannot (the in-memory backend never does; the environment
 * variable DSIGHT_NO_PUSHDOWN turns it off for parity tests): the caller
 * then filters, sorts and pages dataset_foreach itself.
 */
#define DATASET_FALLBACK STORE_COLL_FALLBACK
int dataset_select(struct dataset *ds, enum evidence_collection c,
                   const struct store_select *sel, int64_t *total,
                   int64_t *unaligned, dataset_elem_fn fn, void *ctx,
                   struct err *e);

/* Brackets one query's reads (SQLite: one read transaction, so the file is
 * locked and checked once, not per statement; no-op in memory). */
int dataset_read_begin(struct dataset *ds, struct err *e);
void dataset_read_end(struct dataset *ds);

/*
 * Build-time summaries (SQLite caches that have them; doc/report-files.md
 * "Summaries").  Each answers for the whole run [0, duration] and sets
 * *have to 1, or sets it to 0 (the in-memory backend, a cache without
 * them, DSIGHT_NO_SUMMARIES=1 at open, dataset_set_summaries(ds, 0), or an
 * item the build could not summarise exactly): then scan as usual.  The
 * answers are identical either way.  0 or an ERR_* code.
 */
void dataset_set_summaries(struct dataset *ds, int on);
/* The number of NVTX ranges of profile (catalog index) in the run. */
int dataset_run_events(struct dataset *ds, int64_t profile, int *have,
                       int64_t *count, struct err *e);
/* The CPU samples of profile in the run: *total, and fn once per stack
 * index with samples (any order); fn returns nonzero for an index the
 * profile does not have (a data error, store_summary_samples). */
typedef int (*dataset_stack_fn)(void *ctx, int64_t stack, int64_t samples);
int dataset_run_samples(struct dataset *ds, int64_t profile, int *have,
                        int64_t *total, dataset_stack_fn fn, void *ctx,
                        struct err *e);
/* The metrics statistics of series over the run, into out (initialised
 * with numstats_init). */
struct numstats;
int dataset_run_series(struct dataset *ds, int64_t series, int *have,
                       struct numstats *out, struct err *e);
/* Per NVTX name index of profile (-1: ranges without a name): the ranges
 * in the run, their largest duration and the parts of the exact sums of
 * their durations and of their time inside the run (store/store_sumnames.h;
 * fn's non-zero return stops the walk and is returned). */
typedef int (*dataset_name_fn)(void *ctx, int64_t name, int64_t count,
                               double max, const double *dur, size_t ndur,
                               const double *clip, size_t nclip);
int dataset_run_names(struct dataset *ds, int64_t profile, int *have,
                      dataset_name_fn fn, void *ctx, struct err *e);
/* The bins b of profile b->id (bin i = [i*width, (i+1)*width); see
 * store/store_sumnames.h): v->name once per (bin, name) with the ranges
 * contained in the bin (their time inside a window holding the bin is
 * their duration: dur and clip are the same parts), v->cross once per
 * range starting in the bins and crossing a bin end. */
int dataset_name_bins(struct dataset *ds, const struct row_bins *b,
                      int *have, const struct store_sumnames_visit *v,
                      struct err *e);
/* The timeline bins b of profile b->id (store/store_sumnames.h
 * store_sumnames_timeline): v->bin once per bin (by_name 0; name -2) or
 * per (bin, name) with the ranges contained in it, v->cross once per
 * range starting in the bins that touches a bin edge. */
int dataset_range_bins(struct dataset *ds, const struct row_bins *b,
                       int by_name, int *have,
                       const struct store_sumnames_visit *v, struct err *e);
/* The CPU sample bins b of profile b->id and the point bins of series
 * b->id (store/store_sumbins.h). */
int dataset_sample_bins(struct dataset *ds, const struct row_bins *b,
                        int *have, store_sumbins_sample_fn fn, void *ctx,
                        struct err *e);
int dataset_point_bins(struct dataset *ds, const struct row_bins *b,
                       int *have, store_sumbins_point_fn fn, void *ctx,
                       struct err *e);
/* The ranges of profile overlapping w in ascending start order (equal
 * starts in any order); fn's non-zero return stops the walk and is
 * returned.  Offered with the summaries (*have as above). */
int dataset_events_by_start(struct dataset *ds, int64_t profile,
                            const struct row_window *w, int *have,
                            row_event_fn fn, void *ctx, struct err *e);

#endif
