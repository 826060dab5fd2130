/*
 * qtempvfs: the sql kind's SQLite VFS.  It forwards everything to the
 * default VFS and counts the bytes that temporary files (sorts, temporary
 * b-trees, a recursive query's queue) hold: past QTEMPVFS_CAP a write
 * fails with SQLITE_FULL, so one statement cannot fill the disk before its
 * time limit ends it.
 *
 * The count is process-wide (SQLite's VFS registry is too); the sql kind
 * runs one statement at a time per session, so it bounds a statement.
 */
#ifndef DSIGHT_QTEMPVFS_H
#define DSIGHT_QTEMPVFS_H

#define QTEMPVFS_NAME "dsight-sql"
#define QTEMPVFS_CAP ((long long)1 << 30) /* bytes of temporary files */

/* Registers the VFS (once per process; thread-safe).  Returns an SQLite
 * result code. */
int qtempvfs_register(void);

#endif
