/*
 * sqlstream: one streamed answer of the sql kind in a session
 * (doc/sessions-protocol.md "Streamed sql answers"): the statement's open
 * cursor and the frames each of its batches becomes.
 *
 * Each step (on a worker thread) computes one batch of rows and writes
 * it as a `rows` notification of at most SQLSTREAM_FRAME bytes (more only
 * when one row is longer by itself: at most QUERY_SQL_ROW_MAX of row);
 * the first batch carries the generation and the columns; the last step
 * also writes the final response {"generation", "data": {"row_count",
 * "truncated"}}, or the error response (after the batch of the rows
 * computed before the error, if any).
 * Between steps the statement is paused, its clock too: the dispatcher
 * runs the next step only when the client has taken what was sent, so a
 * client that stops reading holds its cursor and nothing else.
 */
#ifndef DSIGHT_SQLSTREAM_H
#define DSIGHT_SQLSTREAM_H

#include <jansson.h>

#include "base/buf.h"
#include "query/query.h"
#include "session.h"

/* A batch frame's size, frame header included. */
#define SQLSTREAM_FRAME ((size_t)1 << 20)

struct sqlstream;

/* A stream not yet opened; *out owned by the caller (sqlstream_free). */
int sqlstream_new(struct sqlstream **out);
/*
 * Worker thread: opens the statement of p on g (first call: p is
 * borrowed until sqlstream_free, its sql_cursor member is set here; its
 * cancel flag, when set, ends the statement), then steps one batch and appends its frames, answering
 * request id (borrowed), to o.  Returns 1 once the answer is complete
 * (final or error frame written), else 0.
 */
int sqlstream_step(struct sqlstream *s, struct session_gen *g,
                   struct query_params *p, const json_t *id, struct buf *o);
/* Frees s (NULL allowed) and its cursor. */
void sqlstream_free(struct sqlstream *s);

#endif
