/*
 * store_summary: whole-run summaries computed while the rows are loaded and
 * stored beside the v1 tables (dsight_summary_*, doc/report-files.md
 * "Summaries"), so whole-run answers need no scan: per profile the number
 * of NVTX ranges and CPU samples inside [0, duration], per (profile, stack)
 * the CPU samples inside it, and per series the metrics statistics of the
 * points inside it, accumulated in ordinal order with the engine's own code
 * (numstats), so a summary prints exactly what a scan prints.
 *
 * A summary is written only when it is exact: rows are counted for
 * time >= 0 while loading, and at the end (when the duration is known) a
 * profile or series with a row after the duration gets no summary (the
 * reader then scans as before).
 */
#ifndef DSIGHT_STORE_SUMMARY_H
#define DSIGHT_STORE_SUMMARY_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/num.h"
#include "store/store_sumbins.h"
#include "store/store_sumnames.h"

/* ---- build side (the store writer's thread) ---- */

struct store_summary_acc;

/* A new, empty accumulator (caller frees with store_summary_acc_free);
 * NULL when out of memory. */
struct store_summary_acc *store_summary_acc_new(void);
void store_summary_acc_free(struct store_summary_acc *a);

/* One row each, in ordinal order per profile or series.  ERR_NOMEM. */
int store_summary_event(struct store_summary_acc *a, int64_t profile,
                        int64_t name, double start, double end,
                        struct err *e);
int store_summary_sample(struct store_summary_acc *a, int64_t profile,
                         double time, int64_t stack, struct err *e);
int store_summary_point(struct store_summary_acc *a, int64_t series,
                        int64_t ordinal, double time,
                        const struct num *value, struct err *e);

/* Creates the dsight_summary_* tables in db and writes the exact summaries
 * for the run duration of catalog.meta (borrowed). */
int store_summary_write(struct store_summary_acc *a, sqlite3 *db,
                        const json_t *catalog, struct err *e);

/* ---- read side ---- */

struct store_summary;

/*
 * Opens the summaries of the cache behind db (borrowed; one thread) for
 * the run duration `duration`.  *out is NULL (and 0 returned) when the
 * cache has none or they were made for another duration; else owned by the
 * caller (store_summary_close).
 */
int store_summary_open(sqlite3 *db, double duration,
                       struct store_summary **out, struct err *e);
void store_summary_close(struct store_summary *s);

/* Each lookup returns 0 or an ERR_* code (e filled) and sets *have to 1
 * when the item is summarised (else 0: scan instead). */

/* Whole-run NVTX range count of a profile (index into catalog.profiles). */
int store_summary_events(struct store_summary *s, int64_t profile,
                         int *have, int64_t *count, struct err *e);

/* Whole-run CPU samples of a profile: *total, and fn(ctx, stack, samples)
 * for each stack index with samples (any order).  fn returns nonzero for a
 * stack index the profile does not have (the build checks every sample's
 * index, so only an altered row names one): a data error naming
 * dsight_summary_stacks. */
typedef int (*store_summary_stack_fn)(void *ctx, int64_t stack,
                                      int64_t samples);
int store_summary_samples(struct store_summary *s, int64_t profile,
                          int *have, int64_t *total,
                          store_summary_stack_fn fn, void *ctx,
                          struct err *e);

/* Whole-run statistics of a series into out (initialised by the caller
 * with numstats_init). */
struct numstats;
int store_summary_series(struct store_summary *s, int64_t series,
                         int *have, struct numstats *out, struct err *e);

/* The readers by NVTX name and by bin (store_sumnames, store_sumbins),
 * borrowed from s; NULL for a cache written before them (those readers
 * then answer *have = 0). */
struct store_sumnames *store_summary_names(struct store_summary *s);
struct store_sumbins *store_summary_bins(struct store_summary *s);

#endif
