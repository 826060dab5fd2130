/*
 * qsqlengine: the sql engine of one open cache in a long-lived process (a
 * session's generation, an MCP server's dataset).  Owns the engine's
 * columns (qsqlmem.h), loaded on a thread of their own when the first sql
 * query asks for them, and the pool of connections set up for the file
 * (query_sql.h).  Until the columns are loaded (or when they are declined
 * or failed) statements run on the file's views, through the same pool.
 */
#ifndef DSIGHT_QSQLENGINE_H
#define DSIGHT_QSQLENGINE_H

#include "query/qparams.h"

struct qsqlengine;

/* An engine for the cache at data_path (copied); with_mem 0: the pool
 * only (the state stays "off").  Owned by the caller (qsqlengine_free);
 * NULL when out of memory (callers then run statements without one). */
struct qsqlengine *qsqlengine_new(const char *data_path, int with_mem);

/* For a query p of the sql kind: starts the load once and points p at
 * the columns (when loaded) and the pool.  Other kinds, and g NULL, are
 * left as they are.  Safe from several threads. */
void qsqlengine_use(struct qsqlengine *g, struct query_params *p);

/* "off", "loading", "ready", "declined" (the cache's views are not this
 * build's) or "failed"; "off" for NULL. */
const char *qsqlengine_state(const struct qsqlengine *g);

/* How many sql statements the engine answered with its own grouped
 * aggregates (qsqlagg.h); 0 for NULL. */
unsigned long long qsqlengine_native(const struct qsqlengine *g);

/* Stops a load under way and frees g (NULL allowed): every statement that
 * used it must be closed first. */
void qsqlengine_free(struct qsqlengine *g);

#endif
