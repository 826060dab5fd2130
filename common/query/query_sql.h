/*
 * query_sql: the `sql` query kind (doc/query-semantics.md "sql"): one
 * read-only statement against the report's SQLite cache, on a connection
 * of its own that can neither write nor reach outside the file.
 *
 * It owns the safety rules: a read-only URI connection with
 * SQLITE_DBCONFIG_DEFENSIVE, no extension loading and no two-argument
 * fts3_tokenizer; an authorizer that allows reading, an allow-list of
 * functions (core scalar, aggregate, window, math, date and JSON) and a
 * read-only allow-list of pragmas, and denies everything else (writes, DDL,
 * ATTACH, transactions); exactly one statement; the time limit (a progress
 * handler, and bounded replacements of the functions one call of which
 * could outlive it: qsqlfn.h); the value, pattern, heap and temporary-file
 * bounds (qtempvfs.h); and the output caps (max_rows rows, at most
 * QUERY_SQL_MAX_ROWS_LIMIT, and QUERY_SQL_MAX_BYTES of response).
 *
 * It also owns the stepping of a statement in batches (struct
 * query_sql_cursor): the answer's rows as they are computed, a batch at a
 * time, for the streamed answers of the CLI and the session (the whole
 * answer then has no byte cap; one row's JSON is at most QUERY_SQL_ROW_MAX).
 */
#ifndef DSIGHT_QUERY_SQL_H
#define DSIGHT_QUERY_SQL_H

#include <stdint.h>

#include "base/buf.h"
#include "base/cancel.h"
#include "base/err.h"

struct qsqlmem;

/* The default and the largest max_rows (rows of one answer). */
#define QUERY_SQL_MAX_ROWS 10000
#define QUERY_SQL_MAX_ROWS_LIMIT 1000000
/* The longest statement text (bytes), however it is given. */
#define QUERY_SQL_TEXT_MAX ((size_t)1 << 20)
#define QUERY_SQL_MAX_BYTES (16u << 20)
/* A streamed answer: the longest row (its JSON text; a longer one ends
 * the answer, truncated), and the bytes of rows a batch aims at. */
#define QUERY_SQL_ROW_MAX ((size_t)QUERY_SQL_MAX_BYTES - 64)
#define QUERY_SQL_BATCH ((size_t)1 << 20)
/* A batch is also cut once it has taken this long (seconds), so the first
 * rows of a slow statement go out before the last are computed. */
#define QUERY_SQL_FLUSH_S 0.1
/* The largest string or blob: room for the catalog row the views read
 * (at most 32 MiB when dsight builds it), and no more. */
#define QUERY_SQL_VALUE_MAX ((32 << 20) + (1 << 20))
/* The longest LIKE or GLOB pattern (bytes). */
#define QUERY_SQL_PATTERN_MAX 10000
/* SQLite's heap in a process that runs sql statements (dsightd, dsight
 * query, dsight mcp set it at start: sqlite3_hard_heap_limit64). */
#define QUERY_SQL_HEAP_MAX ((long long)384 << 20)
#define QUERY_SQL_TIMEOUT_DEFAULT 10.0
#define QUERY_SQL_TIMEOUT_MAX 30.0

/* The message for a statement longer than QUERY_SQL_TEXT_MAX. */
#define QUERY_SQL_TOO_LONG \
	"The statement is longer than 1 MiB (1048576 bytes), the most sql " \
	"takes"

/* The message for a dataset without a cache with views. */
#define QUERY_SQL_NO_CACHE \
	"sql needs the SQLite cache of a progressive report: run dsight " \
	"build without --single-file"

struct query_sql_cursor;
struct query_sql_pool;

/* What a statement runs with besides its text (all borrowed, may be
 * NULL): once *stop is set, the statement ends within moments with
 * ERR_DATA "The session is stopping; ..."; cancel a second stop flag: once
 * set it ends with ERR_DATA "The client went away; ...".  mem: the sql
 * engine's columns (qsqlmem.h), whose virtual tables then answer for the
 * file's nvtx and metric_points views (qsqlvtab.h).  pool: where the
 * statement takes a connection already set up for this file and mem, and
 * gives it back when it is closed (without one, each statement opens and
 * closes its own). */
struct query_sql_with {
	const cancel_flag *stop, *cancel;
	const struct qsqlmem *mem;
	struct query_sql_pool *pool;
};

/* Idle connections kept by a pool: each holds the file's parsed schema
 * (about 3 ms of CPU to set up again), its page cache released. */
#define QUERY_SQL_POOL_MAX 4

/* A pool for the statements of one file (with one mem or none): owned by
 * the caller (query_sql_pool_free, after the last statement using it is
 * closed, and before the mem it served is freed); NULL when out of
 * memory.  Safe to use from several threads. */
struct query_sql_pool *query_sql_pool_new(void);
void query_sql_pool_free(struct query_sql_pool *p);

/* How many statements run through p were grouped aggregates the engine
 * computed itself (qsqlagg.h) rather than SQLite; 0 for NULL. */
unsigned long long query_sql_pool_native(struct query_sql_pool *p);

/*
 * Runs statement sql (NUL-terminated) on the cache at abs_path with the
 * time limit timeout_s (already validated: 0 < t <= 30) and appends
 * {"columns","rows","row_count","truncated"} to out, at most max_rows rows
 * (already validated: 0 <= n <= QUERY_SQL_MAX_ROWS_LIMIT).  SQL errors and
 * refusals are ERR_USAGE with a message naming the cause; the time limit is
 * ERR_DATA "The statement ran longer than <t> s".  with: as above (not
 * NULL).  Nothing in the file changes.
 */
int query_sql_run(const char *abs_path, const char *sql, double timeout_s,
                  int64_t max_rows, const struct query_sql_with *with,
                  struct buf *out, struct err *e);

/*
 * Opens statement sql as query_sql_run would run it (every check and
 * refusal the same) and prepares it, without stepping: *out (owned by the
 * caller: query_sql_close) then yields the rows.  The time limit counts
 * only the time spent in query_sql_open and query_sql_next.
 */
int query_sql_open(const char *abs_path, const char *sql, double timeout_s,
                   int64_t max_rows, const struct query_sql_with *with,
                   struct query_sql_cursor **out, struct err *e);
/* Appends the column names as a JSON array. */
void query_sql_columns(const struct query_sql_cursor *cur, struct buf *out);
/*
 * Steps cur and appends the next rows to out, each a JSON array, separated
 * by commas (no brackets around them, none before the first): whole rows
 * until the batch holds budget bytes (a row that would take it past stays
 * for the next call), the rows end, or (flush_s > 0) the batch took
 * flush_s seconds.  The first row of a batch is taken whatever budget
 * says, unless its JSON is longer than row_max: the answer then ends,
 * truncated, as it does after max_rows rows.  On error (the messages of
 * query_sql_run) the cursor is done.
 */
int query_sql_next(struct query_sql_cursor *cur, struct buf *out,
                   size_t budget, size_t row_max, double flush_s,
                   struct err *e);
/* 1 once no row is left (or after an error). */
int query_sql_done(const struct query_sql_cursor *cur);
/* Rows written so far; whether rows were left out (max_rows, row_max). */
int64_t query_sql_row_count(const struct query_sql_cursor *cur);
int query_sql_truncated(const struct query_sql_cursor *cur);
/* Frees cur (NULL allowed): its statement and connection. */
void query_sql_close(struct query_sql_cursor *cur);

#endif
