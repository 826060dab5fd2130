/*
 * rowscan: every detail row of the staged store (the NVTX ranges, CPU
 * samples and metric points of each profile and series, then each
 * profile's GPU rows), read in document order and handed over as the
 * text of its shard row: what a single-file report's parts measure and
 * then route (parts, partcost).
 */
#ifndef DSIGHT_ROWSCAN_H
#define DSIGHT_ROWSCAN_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "report/shard.h"

/* One row: its kind, profile or series index, start and end (equal for
 * samples and points) and its shard text (borrowed for the call).  0, or
 * an error code with e filled, which stops the scan. */
typedef int (*rowscan_fn)(void *ctx, enum shard_kind kind, int64_t index,
                          double start, double end, const char *text,
                          size_t len, struct err *e);

/*
 * Calls f for every row of db (a reader of the staged store); catalog
 * (borrowed) names the profiles that have GPU rows.  0, f's error, or
 * ERR_DATA / ERR_NOMEM naming what failed.
 */
int rowscan_all(sqlite3 *db, const json_t *catalog, rowscan_fn f, void *ctx,
                struct err *e);

#endif
