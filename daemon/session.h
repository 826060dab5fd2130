/*
 * session: the warm dataset behind a dsightd socket, and its generations.
 *
 * A generation is one opened dataset (catalog + database) plus a pool of
 * per-thread handles cloned from it (dataset_clone), reference counted so a
 * request keeps the generation it started with: a response never mixes two
 * generations.  Before each request the loop thread calls session_changed,
 * which compares the file identity (device, inode, size, mtime, ctime) of
 * the data file with the one opened.  When it differs the new generation is
 * opened off the loop (session_load on a worker thread) and swapped in on
 * the loop (session_install); when that fails the waiting requests get the
 * error and the next request tries again.
 */
#ifndef DSIGHT_SESSION_H
#define DSIGHT_SESSION_H

#include "base/buf.h"
#include "base/err.h"
#include "query/query.h"

struct session;
struct session_gen;

/* Opens the dataset at report (made absolute here).  web != 0: every
 * generation also loads its viewer files (webgen.h) for the HTTP
 * transport.  sql_engine != 0: a generation's first sql query starts
 * loading the sql engine's columns (qsqlmem.h) on a thread of their own,
 * and its sql queries read them once loaded.  *out is owned by the caller
 * (session_close). */
int session_open(const char *report, int web, int sql_engine,
                 struct session **out, struct err *e);
/* Releases the current generation; in-flight requests keep theirs. */
void session_close(struct session *s);

/* The absolute report path as given to session_open. */
const char *session_report(const struct session *s);
/* The current generation's id (borrowed; valid until the next install). */
const char *session_generation(const struct session *s);

/* The current generation's sql engine: "off" (not asked for yet, or the
 * session runs without it), "loading", "ready", "declined" (the cache is
 * not one it serves: the file's views answer) or "failed". */
const char *session_sql_engine(const struct session *s);
/* Statements of the current generation answered by the sql engine's own
 * grouped aggregates. */
unsigned long long session_sql_native(const struct session *s);

/* Loop thread: 1 when the data file's identity differs from the current
 * generation's (the report was rebuilt, removed or replaced), else 0. */
int session_changed(const struct session *s);
/* Any thread: opens the report's generation as it is now.  *out holds one
 * reference (session_install or session_release).  On failure ERR_DATA
 * "The report changed but its new generation could not be opened (the
 * next request will try again): ...". */
int session_load(const struct session *s, struct session_gen **out,
                 struct err *e);
/* Loop thread: makes g (its reference taken over) the current generation;
 * requests in flight keep theirs. */
void session_install(struct session *s, struct session_gen *g);

/* Loop thread: a reference on the current generation for one request. */
struct session_gen *session_acquire(struct session *s);
/* Any thread: drops a reference (the last one closes the generation). */
void session_release(struct session_gen *g);
const char *session_gen_id(const struct session_gen *g);
struct webgen;
/* The viewer files of g (NULL unless the session was opened with web). */
const struct webgen *session_gen_web(const struct session_gen *g);

/* Worker thread: runs one query on a handle of g (taken from its pool,
 * cloned when none is free) and appends the engine's JSON to out. */
int session_gen_query(struct session_gen *g, const struct query_params *p,
                      struct buf *out, struct err *e);

#endif
