/*
 * nsys_runs: one table of an Nsight export read in key order without
 * sorting it.
 *
 * Owns the ordered read of a table whose rows are stored mostly in key
 * order (Nsight writes activity per stream or thread, each in time order):
 * a first pass over the key columns in rowid order finds the natural runs
 * (stretches whose keys do not decrease); each run is then read by its own
 * rowid-range statement and the runs are merged on (key..., rowid).  With
 * more runs than NSYS_RUNS_MAX it falls back to one statement with ORDER BY
 * (SQLite's sort, in temporary storage).  Either way the rows come in
 * (key..., rowid) order and memory does not grow with the row count.
 * A row whose key columns are not all integers has no place in the order:
 * it comes whenever it is met (callers skip such rows).
 */
#ifndef DSIGHT_NSYS_RUNS_H
#define DSIGHT_NSYS_RUNS_H

#include <sqlite3.h>

#include "base/err.h"
#include "ingest/nsys_export.h"

#define NSYS_RUNS_MAX 64

struct nsys_runs;

/*
 * Opens the ordered read of table (a name from the caller's fixed list)
 * of x: each row's columns are rowid (column 0), the nkey (1 or 2) key
 * expressions of keys, then those of rest (comma-separated SQL, or
 * NULL); where (SQL, or NULL) filters the rows.  *out is owned by the caller
 * (nsys_runs_close); x must outlive it.  SQLite failures are ERR_DATA
 * naming the export.
 */
int nsys_runs_open(const struct nsys_export *x, const char *table,
                   const char *keys, int nkey, const char *rest,
                   const char *where,
                   struct nsys_runs **out, struct err *e);

/* The next row: *row is the statement positioned on it (valid until the
 * next call), 1; 0 at the end; <0 after setting e. */
int nsys_runs_next(struct nsys_runs *r, sqlite3_stmt **row, struct err *e);

/* How the table was read: its natural runs (0 when sorted by SQLite). */
int nsys_runs_count(const struct nsys_runs *r);

void nsys_runs_close(struct nsys_runs *r);

#endif
