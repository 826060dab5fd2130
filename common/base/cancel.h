/*
 * cancel: stopping a long operation when the user asks (SIGINT, SIGTERM,
 * SIGHUP set a flag in the command's main) or when the daemon gives up on
 * a query.  Owns the flag's type, the one way a flag is read and the hook
 * that lets a long SQLite statement (an index build, an ordered scan of an
 * export, a density scan) notice it: the statement then fails with
 * SQLITE_INTERRUPT and the caller reports "interrupted".
 *
 * The flag is a lock-free atomic int, not a volatile sig_atomic_t: it is
 * set by a signal handler or another thread and read by worker threads,
 * and only an atomic is defined for both (C11 7.14.1.1, 5.1.2.4).
 */
#ifndef DSIGHT_CANCEL_H
#define DSIGHT_CANCEL_H

#include <stdatomic.h>

typedef struct sqlite3 sqlite3; /* as sqlite3.h declares it */

typedef atomic_int cancel_flag;

/* 1 when flag is set (NULL: never). */
int cancel_requested(const cancel_flag *flag);

/* Makes every statement of db stop soon after *flag becomes non-zero
 * (NULL: removes the hook).  flag is borrowed: it must outlive db. */
void cancel_sqlite(sqlite3 *db, const cancel_flag *flag);

#endif
