/*
 * query: the one query engine (doc/query-semantics.md) behind the CLI, the
 * daemon and the MCP server.  It owns the table of query kinds, validates
 * parameters, dispatches one kind against a dataset and returns the
 * response as compact JSON text.  It never prints.  The parameters and
 * their table are in qparams.h.
 */
#ifndef DSIGHT_QUERY_H
#define DSIGHT_QUERY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "query/dataset.h"
#include "query/qparams.h"

struct qctx;

struct qkind {
	const char *name;
	int (*run)(struct qctx *q);
	const char *help;    /* one line: what it answers */
	const char *web;     /* its browser API call (web/query.js) or NULL */
	const char *example; /* CLI arguments after DATASET, or NULL */
};

/* The kinds, in the order of the "Unknown query kind" message. */
extern const struct qkind query_kind_table[];
extern const size_t query_kind_count;

/* The kind named name; NULL when there is none. */
const struct qkind *query_kind_find(const char *name);

/*
 * Runs one query and appends its compact JSON response to out.  Validation
 * (doc/query-semantics.md "Validation") fails with ERR_USAGE and the exact message; data
 * errors with ERR_DATA or ERR_REBUILT.  On failure out's content is
 * unspecified.
 */
int query_run(struct dataset *ds, const struct query_params *p,
              struct buf *out, struct err *e);

#endif
