/*
 * evcheck: the validation evparse runs when an object of the evidence
 * document ends (doc/evidence-document.md): source and series ids equal to
 * their index, unique request ids and numeric request times, string
 * dictionaries, row indexes within their dictionaries, cpu stack entries,
 * and meta.duration.  Each returns 1 when the object is valid, otherwise 0
 * with the error recorded in p (naming the JSON path).  Private to evparse.
 */
#ifndef DSIGHT_EVCHECK_H
#define DSIGHT_EVCHECK_H

#include "ingest/evparse_impl.h"

/* f (borrowed) is a source or series: its id must equal its array index. */
int evcheck_id(struct evparse *p, const struct frame *f);

/* f (borrowed) is a request: a new string id, numeric start/end/first. */
int evcheck_request(struct evparse *p, const struct frame *f);

/* obj's (borrowed) `names` must hold strings. */
int evcheck_names(struct evparse *p, json_t *obj);

/* The streamed rows' indexes (b, borrowed) must lie within a dictionary of
 * size entries; rows, what and dict name them in the message. */
int evcheck_bounds(struct evparse *p, const struct evrow_bounds *b, int64_t size,
                   const char *rows, const char *what, const char *dict);

/* cpu's (borrowed) `stacks` must be arrays of indexes into its `names`. */
int evcheck_stack_entries(struct evparse *p, json_t *cpu);

/* meta (borrowed) must hold a finite duration > 0; path names it. */
int evcheck_meta(struct evparse *p, json_t *meta, const char *path);

#endif
