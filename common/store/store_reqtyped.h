/*
 * store_reqtyped: the requests' typed tables (STORE_TYPED_REQUESTS and
 * STORE_TYPED_REQUEST_WORKERS), written during the load.
 *
 * Each value must be what SQLite's json_extract (and json_each, for the
 * workers) reads from the request's stored JSON, so the views over them
 * give the rows of the JSON-decoding views.  A request whose members are
 * plain (absent, null, booleans, integers, finite reals, strings without
 * a NUL; workers absent, null or an array of such) has its values taken
 * from the parsed element as it is encoded; json_extract would read the
 * same from the JSON dsight wrote.  Anything else (an object or array
 * member, a NUL, workers not an array) makes the whole build fall back to
 * reading every request's JSON with json_extract after the load, as
 * before.  Encoding runs on the parsing thread, inserting on the writer's.
 */
#ifndef DSIGHT_STORE_REQTYPED_H
#define DSIGHT_STORE_REQTYPED_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "store/store_val.h"

#define STORE_TYPED_REQUESTS "dsight_view_requests"
#define STORE_TYPED_REQUEST_WORKERS "dsight_view_request_workers"
#define STORE_REQTYPED_COLS 13 /* after ordinal: id, session, ... */

/* One request's typed values; the workers' values are in the buffer at
 * w_off: each a struct store_val, then its text if any. */
struct store_reqtyped_rec {
	struct store_val v[STORE_REQTYPED_COLS];
	size_t w_off, w_len;
	int ok; /* plain: written during the load */
};

/*
 * Fills *r from request el (borrowed), appending texts to text (r's
 * buffer).  r->ok = 0 when el is not plain (see above).  Out of memory
 * shows as text->failed.
 */
void store_reqtyped_encode(struct buf *text, const json_t *el,
                           struct store_reqtyped_rec *r);

/* The tables, and the inserts prepared into *ins and *ins_w (finalize
 * them with sqlite3_finalize).  ERR_DATA naming db's message. */
int store_reqtyped_create(sqlite3 *db, sqlite3_stmt **ins,
                          sqlite3_stmt **ins_w, struct err *e);

/* Inserts the request at ordinal with values r (texts in text), or,
 * when r is not plain, sets *irregular; once it is set, inserts nothing
 * more. */
int store_reqtyped_insert(sqlite3_stmt *ins, sqlite3_stmt *ins_w,
                          const char *text, int64_t ordinal,
                          const struct store_reqtyped_rec *r, int *irregular,
                          struct err *e);

/* After the load: when irregular, empties both tables and fills them
 * again from the JSON of every request in table json_table (columns
 * ordinal and json) with json_extract and json_each. */
int store_reqtyped_finish(sqlite3 *db, const char *json_table,
                          int irregular, struct err *e);

#endif
