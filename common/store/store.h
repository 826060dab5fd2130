/*
 * store: the reader of the SQLite query cache, schema version 1
 * (doc/report-files.md).  It opens the file read-only by URI (never changing it, not
 * even its mtime), checks `PRAGMA user_version`, reads the one catalog row
 * and re-checks the generation on demand; rows come from the contract's
 * indexes (event_window, sample_window, point_window) and the durations
 * table.  One struct store is one connection: use it from one thread.
 */
#ifndef DSIGHT_STORE_H
#define DSIGHT_STORE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"

#define STORE_GENERATION_MAX 64

struct store;

/* True when the 16 bytes at hdr are the SQLite file header. */
int store_is_sqlite_header(const unsigned char hdr[16]);

/*
 * Opens the cache at path (made absolute here) read-only and checks its
 * user_version ("Unsupported DSight SQLite version: N; expected 1 ...").
 * On success *out is owned by the caller (store_close).
 */
int store_open(const char *path, struct store **out, struct err *e);
void store_close(struct store *s);

/* Opens a plain read-only connection to the file at abs_path (an absolute
 * path; by URI with mode=ro, so the file is never changed).  Returns the
 * SQLite result code; *db is set whenever SQLite allocated a handle (the
 * caller sqlite3_close's it, also after a failure). */
int store_open_ro(const char *abs_path, sqlite3 **db);
/* The same through the registered VFS named vfs (NULL: the default). */
int store_open_ro_vfs(const char *abs_path, const char *vfs, sqlite3 **db);

/* The connection (borrowed; for the summary and ordered readers that
 * share it). */
sqlite3 *store_db(struct store *s);

/* One read transaction around the statements of a query: the file is
 * locked and checked once instead of once per statement, and every
 * statement reads the same snapshot.  store_read_end ends it (no-op when
 * none is open). */
int store_read_begin(struct store *s, struct err *e);
void store_read_end(struct store *s);

/* Decodes the current row of st, whose columns are (ordinal, start, end,
 * name, tid, source_row) from the events table; the tid points into st's
 * row.  ERR_DATA for a malformed row. */
int store_event_decode(struct store *s, int64_t profile, sqlite3_stmt *st,
                       int64_t *ordinal, struct row_event *out,
                       struct err *e);

/*
 * Reads the catalog row: *catalog is a new reference to the parsed JSON
 * object (caller json_decref's it) and generation receives the stored id.
 */
int store_read_catalog(struct store *s, json_t **catalog,
                       char generation[STORE_GENERATION_MAX + 1],
                       struct err *e);

/* The catalog row's generation alone (the JSON is not parsed). */
int store_read_generation(struct store *s,
                          char generation[STORE_GENERATION_MAX + 1],
                          struct err *e);

/* The absolute path (for the extension reader, store_coll.h); borrowed. */
const char *store_path(const struct store *s);

/* ERR_REBUILT "DSight dataset was rebuilt; reopen it before querying" when
 * the stored generation differs from generation. */
int store_check_generation(struct store *s, const char *generation,
                           struct err *e);

/*
 * Row scans.  A callback returning non-zero stops the scan; that value is
 * returned.  Data errors return ERR_DATA with e filled.
 *  store_events: w NULL = every event of the profile in ordinal order;
 *    else the durations lower-bound scan of doc/query-semantics.md on
 *    event_window, keeping start <= w->end && end >= w->start (no order);
 *    w->wide (a window over most of the run) filters the profile's rows
 *    in one primary-key pass instead.
 *  store_event_at: the one event (profile, ordinal), if any.
 *  store_samples / store_points: w->start <= time <= w->end (every row
 *    when w is NULL) in ordinal order; w->wide walks the primary key
 *    instead of the time index (cheaper when the window holds most rows).
 *  store_points_before: every point at the latest time strictly before t.
 */
/* ERR_DATA unless profile's durations rows hold maxima inside their
 * buckets and cover every bucket its events are in (the lower-bound scans
 * would miss events otherwise); one index probe per bucket present. */
int store_check_durations(struct store *s, int64_t profile, struct err *e);
int store_events(struct store *s, int64_t profile,
                 const struct row_window *w, row_event_fn fn, void *ctx,
                 struct err *e);
int store_event_at(struct store *s, int64_t profile, int64_t ordinal,
                   row_event_fn fn, void *ctx, struct err *e);
int store_samples(struct store *s, int64_t profile,
                  const struct row_window *w, row_sample_fn fn, void *ctx,
                  struct err *e);
int store_points(struct store *s, int64_t series, const struct row_window *w,
                 row_point_fn fn, void *ctx, struct err *e);
int store_points_before(struct store *s, int64_t series, double t,
                        row_point_fn fn, void *ctx, struct err *e);

#endif
