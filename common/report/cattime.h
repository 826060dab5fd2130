/*
 * cattime: the request summaries of a sharded catalog in request start
 * order (the index's `time_summaries`; doc/report-files.md "Catalog
 * shards").  The per-session summaries serve a query over the whole run;
 * a window query reads instead the time summary shards whose bounds
 * overlap it, which matters when sessions run as long as the capture (a
 * load test's virtual users): then every session shard overlaps every
 * window.
 *
 * A time summary shard is a JSON array of rows [shard, pos, ordinal,
 * ...summary_fields values]: the request's catalog shard, its position
 * among that shard's requests, its catalog ordinal and its summary
 * (catsum.h), ordered by start then ordinal and cut at SHARD_MAX_DECODED
 * bytes of JSON.
 */
#ifndef DSIGHT_CATTIME_H
#define DSIGHT_CATTIME_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"
#include "report/shardq.h"

/*
 * Writes the time summary shards of db's requests through q (borrowed)
 * and appends their descriptors (completed by shardq_finish) (bounds null when a row lacks a numeric start or end)
 * to out.  Reads each request's catalog shard and position from the table
 * pos (columns ord, shard, pos) and its start, end and summary from the
 * table sums (columns ord, start, end as the requests' table holds them,
 * and sum: the summary's values as catsum_values printed them, each after
 * a comma); catshard_write names and fills both, with every request.  No
 * request is read again.  Holds one shard's text at a time.
 */
int cattime_write(sqlite3 *db, const char *pos, const char *sums,
                  struct shardq *q, json_t *out, struct err *e);

#endif
