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

/*
 * Writes the time summary shards of db's dsight_requests into dir and
 * appends their descriptors (bounds null when a row lacks a numeric start
 * or end) to out.  Reads each request's catalog shard and position from
 * the table pos (columns ord, shard, pos; catshard_write names its own),
 * which must hold every request.  Holds one shard's text at a time.
 */
int cattime_write(sqlite3 *db, const char *pos, const char *dir,
                  json_t *out, struct err *e);

#endif
