/*
 * cancel: stopping a long operation when the user asks (SIGINT, SIGTERM,
 * SIGHUP set a flag in the command's main).  Owns the one way a flag is
 * read and the hook that lets a long SQLite statement (an index build, an
 * ordered scan of an export, a density scan) notice it: the statement then
 * fails with SQLITE_INTERRUPT and the caller reports "interrupted".
 */
#ifndef DSIGHT_CANCEL_H
#define DSIGHT_CANCEL_H

#include <signal.h>
#include <sqlite3.h>

/* 1 when flag is set (NULL: never). */
int cancel_requested(const volatile sig_atomic_t *flag);

/* Makes every statement of db stop soon after *flag becomes non-zero
 * (NULL: removes the hook).  flag is borrowed: it must outlive db. */
void cancel_sqlite(sqlite3 *db, const volatile sig_atomic_t *flag);

#endif
