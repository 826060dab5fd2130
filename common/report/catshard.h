/*
 * catshard: the catalog shards of a progressive report and their bounded
 * request index (doc/report-files.md "Catalog shards").
 *
 * When the decoded catalog collections (requests with their spans and
 * lifecycles, sessions, server_spans, iterations) exceed
 * CATSHARD_EMBED_MAX, index.html keeps only the core and the index built
 * here; the collections go to content-addressed detail/<sha256>.json.gz
 * shards.  Everything is read from dsight's extension tables of the staged
 * store in SQL order and streamed: one session group (a session and its
 * requests) is the most held in memory, plus a temporary id table that
 * SQLite keeps in its temp storage.
 *
 * A catalog shard is a JSON array of rows [collection, ordinal, element]
 * (collection 0 requests, 1 sessions, 2 server_spans, 3 iterations; ordinal
 * the element's position in its catalog array; element its compact JSON).
 * The requests' search text goes to search-text shards (catsearch.h),
 * listed in the index as `search`.
 */
#ifndef DSIGHT_CATSHARD_H
#define DSIGHT_CATSHARD_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

/* Collections up to this many decoded bytes stay embedded (1 MiB). */
#define CATSHARD_EMBED_MAX ((uint64_t)1 << 20)
/* Entries of each top list (by ttft_ms, by duration). */
#define CATSHARD_TOP 1000

/*
 * *over = 1 when the collections of db's extension tables, as the JSON
 * arrays of the catalog, exceed CATSHARD_EMBED_MAX bytes (reads rows only
 * until the limit is passed).
 */
int catshard_over_budget(sqlite3 *db, int *over, struct err *e);

struct catshard_stats {
	uint64_t shards;    /* catalog shards */
	uint64_t lookups;   /* id lookup shards */
	uint64_t oversized; /* session groups over the budget */
	char warning[512];  /* the first oversized group, "" when none */
};

/*
 * Writes the catalog shards and id lookup shards of db (read-only, its
 * extension tables complete) into dir, and returns in *index (new
 * reference) the index object for the core catalog's `catalog_shards`:
 * {version, counts, ordinal_order, shards, lookup, search, top_fields,
 * top_ttft, top_duration, density}, and summary_fields, summaries and
 * time_summaries (cattime.h) when no request column is irregular;
 * ordinal_order tells per collection whether its shards' rows, in shard
 * order, come in catalog order.  duration is meta.duration (> 0) for the
 * density bins.
 */
int catshard_write(sqlite3 *db, const char *dir, double duration,
                   json_t **index, struct catshard_stats *st, struct err *e);

#endif
