/*
 * catsearch: the search-text shards of a sharded catalog
 * (doc/report-files.md "Search-text shards").
 *
 * A search over the requests of a sharded catalog keeps a request when the
 * lowercased needle is a substring of one of its lowercased search fields
 * (id, session, agent, conversation, each server_ids and workers entry).
 * This module collects, per catalog shard, those fields as the store
 * already lowercased them (dsight_requests.search: the fields separated by
 * the byte 0xFF), so a viewer scans a few compact strings with indexOf
 * instead of parsing every request.
 *
 * A search-text shard is a JSON array of rows [shard, text, us, rs, gs]:
 * shard the catalog shard's index; text its requests' fields in its row
 * order, by session group: groups joined by gs, each one the fields every
 * request of the group holds (each once), then per request rs and its
 * other fields (each once); fields joined by us.  us, rs and gs are three
 * distinct characters that occur in none of the row's fields (so a needle
 * holding one matches nothing, and a needle without them never matches
 * across two fields).  When no three such characters exist text is null
 * and us, rs, gs are "" (the viewer reads that catalog shard's requests
 * instead).  Rows are packed in catalog shard order under
 * CATSEARCH_MAX_DECODED (a row over it gets a shard of its own).
 */
#ifndef DSIGHT_CATSEARCH_H
#define DSIGHT_CATSEARCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "report/shardq.h"

/* Decoded bytes of a search-text shard: 8 catalog shard budgets.  A full
 * search reads every search-text shard, and a fetch costs more than its
 * bytes (the text of a million generated requests is about 62 MB, gzip
 * about 9 MB: 15 fetches instead of about 120); parsing one is a few long
 * strings. */
#define CATSEARCH_MAX_DECODED (4u * 1024u * 1024u)

struct catsearch {
	struct shardq *q;  /* borrowed: writes the shards */
	struct buf group;  /* the group's requests: fields, 0xFE after each */
	struct buf shard;  /* the current catalog shard's text, marks for separators */
	struct buf pack;   /* rows of the search-text shard being filled */
	uint64_t rows;     /* rows in pack */
	uint64_t first, last; /* the catalog shards of its first and last rows */
	json_t *descs;     /* written shards' descriptors */
};

/* Initialises s to write its shards through q (borrowed; their
 * descriptors are completed by shardq_finish). */
void catsearch_init(struct catsearch *s, struct shardq *q);

/* Adds one request (its search blob: lowercased fields separated by 0xFF,
 * n may be 0) to the group being read. */
int catsearch_add(struct catsearch *s, const void *blob, size_t n,
                  struct err *e);

/* The group joins the current catalog shard. */
int catsearch_group_end(struct catsearch *s, struct err *e);

/* The current catalog shard (index shard) is complete: its requests become
 * a row (none when it holds no request). */
int catsearch_shard_end(struct catsearch *s, uint64_t shard, struct err *e);

/* Writes the last shard and returns its descriptors in *descs (new
 * reference; each {url, sha256, decoded_sha256, bytes, decoded_bytes,
 * count, catalog_shards: [first, last]}). */
int catsearch_finish(struct catsearch *s, json_t **descs, struct err *e);

void catsearch_free(struct catsearch *s);

#endif
