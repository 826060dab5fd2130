/*
 * store_late: SQL run on its own thread after the load, while the build
 * writes the report's other files (doc/performance.md "The name index
 * beside the web phase").
 *
 * The caller hands over a connection and a NULL-terminated list of
 * batches of statements (borrowed: they must outlive the thread); the
 * thread runs them in turn with sqlite3_exec until one fails and keeps
 * that error ("cannot write PATH (late indexes): ...").  Until
 * store_late_wait returns, the connection belongs to the thread: the
 * caller may only interrupt it (sqlite3_interrupt is safe from any
 * thread).
 */
#ifndef DSIGHT_STORE_LATE_H
#define DSIGHT_STORE_LATE_H

#include <sqlite3.h>

#include "base/err.h"

struct store_late;

/*
 * Waits for the thread and frees l (NULL: nothing to wait for, returns 0).
 * Returns 0 or the statements' error, filled into e.  With stop set, the
 * statements are interrupted first and their error is not reported.
 */
int store_late_wait(struct store_late *l, int stop, struct err *e);

/*
 * The build's way of using it.  begin: db is the writer's connection to
 * the file at path (EXCLUSIVE locking, every table committed); it goes to
 * NORMAL locking and WAL, so that read-only connections may open the file
 * while sql[] runs on the thread.  settle: waits for l (NULL: begin was
 * not called; then runs sql[] now unless it is NULL), returns the file to
 * rollback-journal mode (which checkpoints the WAL into it and removes
 * it; every reader must have closed), closes *db (set to NULL) and, unless
 * scratch, syncs the file.  After a failure of either the file is
 * unusable; *db is the caller's to close.
 */
int store_late_begin(sqlite3 *db, const char *path, const char *const *sql,
                     struct store_late **out, struct err *e);
int store_late_settle(struct store_late *l, sqlite3 **db, const char *path,
                      const char *const *sql, int scratch, struct err *e);

/*
 * Opens the file at path (a plain path, not a URI) read-only for one
 * thread, as the build's readers do while the late work writes it: in WAL
 * mode a reader may have to wait a moment for a lock (while the WAL's
 * index is set up), so the connection waits up to STORE_LATE_BUSY_MS
 * rather than fail.  Returns SQLite's result code; *db is set whenever
 * SQLite allocated a handle (the caller closes it, also after a failure).
 */
#define STORE_LATE_BUSY_MS 60000
int store_late_open_reader(const char *path, sqlite3 **db);

#endif
