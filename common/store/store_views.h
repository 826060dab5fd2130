/*
 * store_views: the SQL views dsight build writes into trace-data.sqlite
 * (doc/report-files.md "Views"), so the same names work in the sql query
 * kind and in any SQLite tool: nvtx, cpu_samples, cpu_frames, cpu_self,
 * metric_points, series, metric_series, requests, request_workers,
 * lifecycle_stages, server_spans, profiles, workers, sessions, iterations,
 * sources (the GPU views gpu and gpu_launches are store_gpu's).
 *
 * It owns the views' definitions and the small dsight_view_* helper tables
 * they join (profile worker/rank, NVTX name dictionaries, CPU stack frames,
 * series identity), which are filled from the catalog tree.  The v1 tables
 * and the catalog row are read, never changed.
 */
#ifndef DSIGHT_STORE_VIEWS_H
#define DSIGHT_STORE_VIEWS_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* The view whose presence tells a cache with views (the sql kind checks
 * it). */
#define STORE_VIEWS_MARKER "nvtx"
/* The helper table behind nvtx.thread_name: a cache without it was built
 * before that column (the sql kind says so). */
#define STORE_VIEWS_THREADS "dsight_view_threads"

/* A view and its columns, for help texts (`dsight query sql --help`). */
struct store_view_doc {
	const char *name;
	const char *columns; /* comma-separated, or a sentence */
};

/* Every view store_views_write creates, in creation order. */
extern const struct store_view_doc store_view_docs[];
extern const size_t store_view_doc_count;

/*
 * Creates the helper tables and the views in db (open for writing, inside
 * the build's transaction, after the v1 tables exist).  catalog is the
 * catalog row's tree (borrowed).  ERR_DATA naming what failed.
 */
int store_views_write(sqlite3 *db, const json_t *catalog, struct err *e);

/*
 * 1 when db's view `name` (one of the fixed views: nvtx, metric_points,
 * ...) has exactly the definition this dsight writes, else 0 (an older or
 * newer cache, or no such view).
 */
int store_views_current(sqlite3 *db, const char *name);

#endif
