/*
 * query: the one query engine (queries.md) behind the CLI, the daemon and
 * the MCP server.  It validates parameters, runs one query kind against a
 * dataset and returns the response as compact JSON text.  It never prints.
 */
#ifndef DSIGHT_QUERY_H
#define DSIGHT_QUERY_H

#include <jansson.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/dataset.h"
#include "base/err.h"

struct query_params {
	const char *kind;       /* NULL = "summary" */
	int has_start, has_end; /* absent: 0 and the run duration */
	double start, end;
	const char *request_id, *session, *agent, *worker, *name, *search;
	int has_rank, has_profile;
	int64_t rank, profile;
	double min_ttft_ms;     /* default 0 */
	int64_t offset, limit;  /* defaults 0 and 100 */
	int points;             /* metrics only */
	const char *sql;        /* sql only: the statement */
	int has_timeout;        /* sql only: absent = 10 s */
	double timeout;
};

/* The kinds, in the order of the "Unknown query kind" message; NULL-ended. */
extern const char *const query_kinds[];

/* Sets every parameter to its default. */
void query_params_init(struct query_params *p);

/*
 * Reads RPC/MCP parameters from a JSON object (members by their RPC names;
 * null = absent; unknown members ignored).  A member of the wrong JSON type
 * is ERR_USAGE "<name> must be an integer or null" (or "a number",
 * "a string", "a boolean").  Strings point into j: keep j alive while p is
 * used.
 */
int query_params_from_json(const json_t *j, struct query_params *p,
                           struct err *e);

/*
 * Runs one query and appends its compact JSON response to out.  Validation
 * (queries.md order) fails with ERR_USAGE and the exact message; data
 * errors with ERR_DATA or ERR_REBUILT.  On failure out's content is
 * unspecified.
 */
int query_run(struct dataset *ds, const struct query_params *p,
              struct buf *out, struct err *e);

#endif
