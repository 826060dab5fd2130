/*
 * evparse: the streaming parse state of one evidence document.
 *
 * Owns the yajl callbacks that turn the token stream into (a) a jansson
 * catalog tree with the big arrays emptied, (b) rows handed to an
 * row_sink, and (c) the validation of doc/evidence-document.md, with errors
 * naming the JSON path.  evidence.c drives it (input, yajl, errors of the
 * byte stream); nothing else should need it.
 */
#ifndef DSIGHT_EVPARSE_H
#define DSIGHT_EVPARSE_H

#include <jansson.h>
#include <yajl/yajl_parse.h>

#include "base/row.h"
#include "ingest/evstats.h"

struct evparse;

/* The callbacks to pass to yajl_alloc with the evparse as context. */
extern const yajl_callbacks evparse_callbacks;

/* A new parse state.  file names the input in messages (borrowed: it must
 * outlive the state); sink (borrowed, may be NULL) receives rows; e
 * (borrowed) receives the first error.  Returns NULL when out of memory. */
struct evparse *evparse_new(const char *file, const struct row_sink *sink,
                            struct err *e);

/* The error code a callback stored (0 when yajl itself failed). */
int evparse_error(const struct evparse *p);

/* Appends " (at <json path>)" describing the current position to a
 * message being built, or nothing at the top level. */
void evparse_where(struct evparse *p, char *out, size_t cap);

/* The raw-text look-ahead (strscan) found a lone surrogate escape in the
 * index-th string token (1-based): the callback that receives that string
 * fails, naming its path. */
void evparse_lone_string(struct evparse *p, uint64_t index);

/* Fails at the current position with msg (the string about to start there
 * is too long); returns the error code. */
int evparse_fail_here(struct evparse *p, const char *msg);

/* After yajl_complete_parse succeeded: checks that the document ended
 * validly, then hands over the catalog (new reference) and the stats
 * (owned arrays moved into *stats; free with evstats_free). */
int evparse_finish(struct evparse *p, json_t **catalog,
                   struct evstats *stats);

void evparse_free(struct evparse *p);

#endif
