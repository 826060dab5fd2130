/*
 * cattop: the parts of a sharded catalog's request index that are read
 * straight from dsight_requests (doc/report-files.md "Catalog shards"):
 * the top lists (the first CATSHARD_TOP requests by ttft_ms and by
 * duration, so "slowest requests" needs no shard) and the 512-bin
 * request density.  catshard.c calls them once its shards are written.
 */
#ifndef DSIGHT_CATTOP_H
#define DSIGHT_CATTOP_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* Appends the names of a top-list row's fields (top_fields) to out. */
void cattop_fields(json_t *out);

/*
 * Appends to out (an array) the first `top` requests of db by key (a
 * dsight_requests column: "ttft_ms" or "duration") descending, nulls
 * last, ties by ordinal (the order of `requests --sort -key`), each an
 * array in cattop_fields order whose last value is its catalog shard from
 * the table shard_map (columns id, kind, shard; kind 0 a request: the
 * build's id map, owned by catshard), null when it has none.
 */
int cattop_list(sqlite3 *db, const char *key, const char *shard_map, int top,
                json_t *out, struct err *e);

/* Appends SHARD_DENSITY_BINS counts over [0, duration] to out: each
 * request with numeric start and end adds 1 to the bins it touches. */
int cattop_density(sqlite3 *db, double duration, json_t *out, struct err *e);

#endif
