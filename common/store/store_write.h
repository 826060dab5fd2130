/*
 * store_write: the SQLite v1 writer of trace-data.sqlite (doc/report-files.md).
 *
 * Owns the physical schema (five tables, three indexes, user_version 1,
 * rollback journal), the bulk load and the derived `durations` table.  Rows
 * arrive through an row_sink (store_write_sink) so the evidence reader
 * and the Nsight importer stream straight into the store; they are batched
 * and inserted by a second thread (one transaction, prepared statements,
 * synchronous=OFF, no journal during the load), so parsing and inserting
 * use both cores.  Indexes are created after the load.
 */
#ifndef DSIGHT_STORE_WRITE_H
#define DSIGHT_STORE_WRITE_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"

#define STORE_GENERATION_LEN 32
#define STORE_VERSION 1

struct store_writer;

/* Row counts written so far. */
struct store_write_stats {
	uint64_t events, samples, points;
};

/*
 * Creates a new database at path (which must not exist) with the v1 tables
 * and starts the load.  On success *out is owned by the caller: finish it
 * with store_write_finish and free it with store_write_close.
 */
int store_write_open(const char *path, struct store_writer **out,
                     struct err *e);

/* Makes the load, the index build and the catalog write stop soon after
 * *cancel becomes non-zero (borrowed; NULL: never). */
void store_write_cancel(struct store_writer *w, const volatile sig_atomic_t *cancel);

/* Fills sink (event, sample and point callbacks; ctx = w).  The sink stays
 * valid while w is open. */
void store_write_sink(struct store_writer *w, struct row_sink *sink);

/*
 * Ends the load: stores the one catalog row (catalog printed compact with
 * jsonout_tree; borrowed) with generation, fills `durations`, commits,
 * writes the views (store_views), creates the indexes and leaves the
 * file in rollback-journal mode with
 * user_version 1, synced to disk.  After a failure the file is unusable
 * (the caller discards it).
 */
int store_write_finish(struct store_writer *w, const json_t *catalog,
                       const char *generation, struct err *e);

void store_write_get_stats(const struct store_writer *w,
                           struct store_write_stats *st);

/* Stops any load in progress and frees w (NULL is fine).  An unfinished
 * database file is left for the caller to remove. */
void store_write_close(struct store_writer *w);

/* A fresh random generation id: 32 lowercase hex digits + NUL (from the
 * kernel's random source). */
int store_generation_new(char out[STORE_GENERATION_LEN + 1], struct err *e);


#endif
