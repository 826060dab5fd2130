/*
 * shardq: whole shards (the catalog's: request groups, summaries, id
 * lookups, search packs, time summaries) compressed, hashed and written
 * on a worker thread while the caller reads the next rows.
 *
 * A shard's descriptor object (shard_desc_json's keys, in its order) is
 * made at once, so the caller can add to it and place it in the index; its
 * url, sha256, decoded_sha256, bytes and decoded_bytes are filled in (in
 * place: the keys keep their order) by shardq_finish, once every shard is
 * written.  Until then they hold "" and 0.
 */
#ifndef DSIGHT_SHARDQ_H
#define DSIGHT_SHARDQ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct shardq;

/* Starts a queue writing into dir (an existing directory; copied).  On
 * success *out is owned by the caller: shardq_finish, then shardq_free. */
int shardq_open(const char *dir, struct shardq **out, struct err *e);

/*
 * Queues the shard whose decoded JSON text is text[0..len) (copied) with
 * count rows and bounds (min start, min end, max start, max end) and
 * returns its descriptor in *out: a new reference, for the caller.
 */
int shardq_add(struct shardq *q, const char *text, size_t len, uint64_t count,
               const double bounds[4], json_t **out, struct err *e);

/* Waits for every queued shard and fills in their descriptors; the first
 * error of a write, if any. */
int shardq_finish(struct shardq *q, struct err *e);

/* Stops the worker (what is queued is dropped) and frees q.  NULL is
 * fine. */
void shardq_free(struct shardq *q);

#endif
