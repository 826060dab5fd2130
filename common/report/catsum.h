/*
 * catsum: a request's summary, the keys a request query filters, sorts and
 * groups on (the index's summary_fields), as the catalog shards of a
 * progressive report carry it: the dsight_requests columns to select and
 * a selected row's values as JSON.  catshard.c writes the summaries per
 * session shard, cattime.c in request start order.
 */
#ifndef DSIGHT_CATSUM_H
#define DSIGHT_CATSUM_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/buf.h"

/* The summary columns of dsight_requests, in summary_fields order (the
 * last two are JSON text). */
#define CATSUM_COLS "id, session, agent, conversation, status, client_kind, " \
	"start, end, first, ttft_ms, input_tokens, output_tokens, " \
	"cached_tokens, span_count, json_extract(json, '$.server_ids'), " \
	"json_extract(json, '$.workers')"
#define CATSUM_N 16
/* start and end among CATSUM_COLS */
#define CATSUM_START 6
#define CATSUM_END 7

/* Appends the field names (summary_fields) to out, an array. */
void catsum_fields(json_t *out);

/* Appends ",v1,...,v16" to b: the values of st's current row from column
 * col0 on (selected as CATSUM_COLS); null where SQL has NULL. */
void catsum_values(struct buf *b, sqlite3_stmt *st, int col0);

#endif
