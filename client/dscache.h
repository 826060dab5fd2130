/*
 * dscache: a small cache of open datasets keyed by resolved path, for a
 * long-lived process that answers many queries (dsight mcp).
 *
 * Before handing out a dataset it compares the file identity of the data
 * file with the one it opened; a rebuilt (or rewritten) report is reopened,
 * so callers never see two generations mixed and never see the engine's
 * "rebuilt; reopen" error.
 */
#ifndef DSIGHT_DSCACHE_H
#define DSIGHT_DSCACHE_H

#include "query/dataset.h"
#include "base/err.h"

struct dscache;

struct qsqlengine;

/* Creates a cache holding at most `max` open datasets, each SQLite cache
 * with its sql engine (qsqlengine.h; sql_engine 0: its connection pool
 * only, the columns are never loaded).  Owned by the caller
 * (dscache_free). NULL on allocation failure. */
struct dscache *dscache_new(int max, int sql_engine);
void dscache_free(struct dscache *c);

/* Returns the dataset for path, opening or reopening it as needed, and in
 * *sql (when sql is not NULL) its sql engine (NULL: none).  Both stay
 * owned by the cache and are valid until the next dscache call (a
 * statement using the engine must be closed before it).  ERR_* with e
 * filled when it cannot be opened. */
int dscache_get(struct dscache *c, const char *path, struct dataset **out,
                struct qsqlengine **sql, struct err *e);

/* Drops path's entry (e.g. after ERR_REBUILT) so the next get reopens. */
void dscache_forget(struct dscache *c, const char *path);

#endif
