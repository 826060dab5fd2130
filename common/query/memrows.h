/*
 * memrows: the in-memory backend's rows.  Reads an evidence document with
 * evidence_read and keeps every event, sample and point in compact
 * per-profile / per-series arrays (thread ids interned, big integers in one
 * text arena), plus a per-(profile, bucket) start order so a window scan
 * uses the same durations lower bound as the SQLite cache.  Read-only after
 * loading, so any number of threads may scan it at once.
 */
#ifndef DSIGHT_MEMROWS_H
#define DSIGHT_MEMROWS_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "store/store.h"

struct memrows;

/* Reads the document at path.  On success *catalog is a new reference (the
 * evidence_read catalog) and *out owned by the caller (memrows_free). */
int memrows_load(const char *path, json_t **catalog, struct memrows **out,
                 struct err *e);
void memrows_free(struct memrows *m);

/* The scans of store.h with the same meaning and order guarantees. */
int memrows_events(const struct memrows *m, int64_t profile,
                   const struct row_window *w, row_event_fn fn, void *ctx);
int memrows_event_at(const struct memrows *m, int64_t profile,
                     int64_t ordinal, row_event_fn fn, void *ctx);
int memrows_samples(const struct memrows *m, int64_t profile,
                    const struct row_window *w, row_sample_fn fn, void *ctx);
int memrows_points(const struct memrows *m, int64_t series,
                   const struct row_window *w, row_point_fn fn, void *ctx);
int memrows_points_before(const struct memrows *m, int64_t series, double t,
                          row_point_fn fn, void *ctx);

#endif
