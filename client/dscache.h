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

/* Creates a cache holding at most `max` open datasets.  Owned by the
 * caller (dscache_free). NULL on allocation failure. */
struct dscache *dscache_new(int max);
void dscache_free(struct dscache *c);

/* Returns the dataset for path, opening or reopening it as needed.  The
 * dataset stays owned by the cache and is valid until the next dscache
 * call.  ERR_* with e filled when it cannot be opened. */
int dscache_get(struct dscache *c, const char *path, struct dataset **out,
                struct err *e);

/* Drops path's entry (e.g. after ERR_REBUILT) so the next get reopens. */
void dscache_forget(struct dscache *c, const char *path);

#endif
