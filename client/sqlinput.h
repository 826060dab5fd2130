/*
 * sqlinput: the input forms of the sql statement on the command line
 * (doc/query-semantics.md "sql"): `--sql -` reads it from standard input,
 * `--sql-file FILE` from a file.  It owns the reading and its checks (at
 * most QUERY_SQL_TEXT_MAX bytes, UTF-8, no NUL byte); the statement then
 * goes to the engine or, with --remote, to the session as text.
 */
#ifndef DSIGHT_SQLINPUT_H
#define DSIGHT_SQLINPUT_H

#include "base/buf.h"
#include "base/err.h"

/*
 * Reads the statement from the file at path, or from standard input when
 * path is NULL, into text (caller-initialised, caller frees), NUL-ended; a
 * leading UTF-8 byte-order mark is dropped.  Reads at most one byte past
 * QUERY_SQL_TEXT_MAX.  Failures are ERR_USAGE with a message naming the
 * source ("The statement of --sql-file q.sql", "The statement of --sql -
 * (standard input)") and the cause: cannot be read (with the system's reason), longer than 1 MiB,
 * not UTF-8 (where and how), holds a NUL byte.
 */
int sqlinput_read(const char *path, struct buf *text, struct err *e);

#endif
