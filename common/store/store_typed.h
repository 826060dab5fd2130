/*
 * store_typed: dsight's typed copies of what the v1 row payloads hold, the
 * storage the sql views read (doc/report-files.md "Typed tables").
 *
 * It owns the extension tables STORE_TYPED_POINTS (a point's time and its
 * value as INTEGER or REAL; the rarely read source id and row, and a real's
 * exact text, stay in the v1 payload) and
 * STORE_TYPED_SAMPLES (a sample's tid, stack and source row, and the symbol
 * of its leaf frame), filled by the store writer in the same pass as the v1
 * rows; the names STORE_TYPED_REQUESTS and STORE_TYPED_REQUEST_WORKERS (the
 * requests' scalar members and worker lists, written by store_reqtyped);
 * the indexes that let the views group by a name without
 * sorting (events by profile and name, the name dictionaries by name and
 * worker) and the planner's statistics.  store_check.c checks that a
 * cache's typed tables agree with its payloads.  A typed value is what SQLite's JSON
 * functions read from the payload (the same conversion), so a view over
 * these tables gives the rows the JSON-decoding views gave.
 */
#ifndef DSIGHT_STORE_TYPED_H
#define DSIGHT_STORE_TYPED_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/num.h"
#include "base/row.h"
#include "store/store_reqtyped.h" /* the requests' table names */

#define STORE_TYPED_POINTS "dsight_points"
#define STORE_TYPED_SAMPLES "dsight_samples"

enum store_typed_kind { STORE_TYPED_SAMPLE, STORE_TYPED_POINT };

/* The prepared inserts (one row, and `multi` rows per statement). */
struct store_typed {
	sqlite3_stmt *one[2], *multi[2]; /* by store_typed_kind */
	int multi_rows;
};

/* The parameters one row binds, by store_typed_kind. */
extern const int store_typed_cols[2];

/*
 * Creates the typed tables in db (open for writing, in the load's
 * transaction) and prepares t's inserts of one and of multi_rows rows.
 * t is zeroed here; release with store_typed_close.  ERR_DATA naming db's
 * message.
 */
int store_typed_create(sqlite3 *db, struct store_typed *t, int multi_rows,
                       struct err *e);

/* The insert of kind k for n rows (1 or t->multi_rows); borrowed. */
sqlite3_stmt *store_typed_stmt(const struct store_typed *t,
                               enum store_typed_kind k, int n);

/* Binds sample row `row` of st, the sample `ordinal` of profile: s->tid
 * is the tid as the payload holds it (a JSON string; borrowed until the
 * step). */
void store_typed_bind_sample(sqlite3_stmt *st, int row, int64_t profile,
                             int64_t ordinal, const struct row_sample *s);

/* Binds point row `row` of st: v is the value, text its JSON text as the
 * payload holds it (borrowed until the step). */
void store_typed_bind_point(sqlite3_stmt *st, int row, int64_t series,
                            int64_t ordinal, double time, const struct num *v,
                            const char *text, size_t len);

void store_typed_close(struct store_typed *t);

/*
 * After the load, the extension tables and the views' helper tables, in
 * the load's transaction (store_views_write): each sample's leaf symbol
 * (the requests' typed tables are store_reqtyped's).  ERR_DATA naming
 * db's message.
 */
int store_typed_views(sqlite3 *db, struct err *e);

/*
 * After the load and the views' helper tables (store_views_write): the
 * indexes and the planner's statistics, with rows[] the exact numbers of
 * NVTX ranges, CPU samples and metric points the load wrote (the row
 * counts of the tables holding them), except the events' name index and
 * the typed requests' indexes: store_typed_late_sql makes those, on the
 * same connection (it reads
 * the counts this left in a temporary table).  ERR_DATA naming db's
 * message.
 */
int store_typed_finish(sqlite3 *db, const uint64_t rows[3], struct err *e);

/* The events' name index (profile, name, start, end), the typed requests'
 * indexes and their statistics: the largest sort of the store phase, which
 * the build runs while it writes the web files (store_write_index_begin). */
extern const char store_typed_late_sql[];

#endif
