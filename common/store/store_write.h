/*
 * store_write: the SQLite v1 writer of trace-data.sqlite (doc/report-files.md).
 *
 * Owns the physical schema (five tables, three indexes, user_version 1,
 * rollback journal), the bulk load and the derived `durations` table; the
 * catalog collections stream in through the sink's element callback into
 * dsight's extension tables (store_ext.h).  Rows
 * arrive through an row_sink (store_write_sink) so the evidence reader
 * and the Nsight importer stream straight into the store; the producer
 * prints the payloads and keeps the whole-run summaries and the ranges'
 * depths (store_depth.h), and a second thread only inserts the batches
 * (one transaction, prepared statements, synchronous=OFF, no journal
 * during the load), so parsing and inserting use both cores.  Indexes are created after the load, the largest one
 * (store_typed_late_sql) while the build writes its other files.
 */
#ifndef DSIGHT_STORE_WRITE_H
#define DSIGHT_STORE_WRITE_H

#include <jansson.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "base/row.h"
#include "store/store_catrow.h" /* the generation id */

#define STORE_VERSION 1

struct store_writer;

/* Row counts written so far. */
struct store_write_stats {
	uint64_t events, samples, points;
	uint64_t catalog_bytes; /* the v1 catalog row's JSON */
	uint64_t whole_catalog_bytes; /* ... had it held the collections */
	int external;           /* its collections are only in the extension */
};

/*
 * Creates a new database at path (which must not exist) with the v1 tables
 * and starts the load.  On success *out is owned by the caller: finish it
 * with store_write_finish and store_write_settle and free it with
 * store_write_close.
 */
int store_write_open(const char *path, struct store_writer **out,
                     struct err *e);

/* Makes the load, the index build and the catalog write stop soon after
 * *cancel becomes non-zero (borrowed; NULL: never). */
void store_write_cancel(struct store_writer *w, const cancel_flag *cancel);

/* Fills sink (event, sample and point callbacks; ctx = w).  The sink stays
 * valid while w is open. */
void store_write_sink(struct store_writer *w, struct row_sink *sink);

/*
 * Ends the load: stores the one catalog row (catalog printed compact with
 * jsonout_tree, borrowed, its streamed collections read back from the
 * extension tables while the row stays within 32 MiB, else left empty
 * and marked "dsight_collections": "external"; see store_ext.h) with
 * generation, dsight_core and dsight_meta, fills `durations`, commits,
 * writes the views (store_views) and creates every index but the events'
 * name index.  Then every table is complete; the file is still held by w
 * until store_write_settle.  After a failure of this or the next two
 * calls the file is unusable (the caller discards it).
 */
int store_write_finish(struct store_writer *w, const json_t *catalog,
                       const char *generation, struct err *e);

/*
 * Optional, between finish and settle: switches the file to WAL, so that
 * other connections (read-only) may read it, and builds the name index on
 * a thread of its own meanwhile.  w must not be used but for settle or
 * close until then.
 */
int store_write_index_begin(struct store_writer *w, struct err *e);

/*
 * Waits for the late indexes (or builds them now, when index_begin was
 * not called and scratch is 0; scratch != 0: the file will only be read
 * and removed, so it gets none and is not synced), then leaves the file in
 * rollback-journal mode with user_version 1, closed and synced to disk.  Every other connection
 * to the file must be closed first.
 */
int store_write_settle(struct store_writer *w, int scratch, struct err *e);

void store_write_get_stats(const struct store_writer *w,
                           struct store_write_stats *st);

/* Stops any load or index build in progress and frees w (NULL is fine).  An unfinished
 * database file is left for the caller to remove. */
void store_write_close(struct store_writer *w);


#endif
