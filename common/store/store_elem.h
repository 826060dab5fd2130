/* store_elem: how a row of dsight's extension tables becomes a catalog
 * element (whole, slim or only its times: enum store_shape) and how their
 * column values order (the engine's sort). */
#ifndef DSIGHT_STORE_ELEM_H
#define DSIGHT_STORE_ELEM_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* The elements a requests selection passes on:
 *   STORE_WHOLE  the stored element;
 *   STORE_SLIM   without "spans" and "lifecycle", "spans" an array of
 *                span_count nulls (the list kind prints only their
 *                number; parsing a page stays cheap);
 *   STORE_TIMES  only the numbers among start, end, first and ttft_ms
 *                (no JSON is parsed: what a timeline of requests reads);
 *   STORE_GROUP  only what grouping requests reads: id, session, agent,
 *                workers, status, client_kind, start, end, ttft_ms,
 *                input_tokens and output_tokens, a missing one as null
 *                (a tenth of a request's text, parsed once by SQLite).
 *                A row whose json is not an object is passed whole, so
 *                the checks name what is wrong with it. */
enum store_shape { STORE_WHOLE, STORE_SLIM, STORE_TIMES, STORE_GROUP };

/* The select-list of an element of this shape (after the ordinal). */
const char *store_elem_columns(enum store_shape shape);

/* The element of st's current row (of table), whose columns from col on
 * are store_elem_columns(shape): *out a new reference.  ERR_DATA when the
 * stored JSON does not parse or a slim row's span_count is not its number
 * of spans (the message names path and table), ERR_NOMEM. */
int store_elem_read(sqlite3_stmt *st, int col, enum store_shape shape,
                    const char *path, const char *table, json_t **out,
                    struct err *e);

/* A JSON value from n bytes of text (NUL allowed): a new reference, NULL
 * when it does not parse. */
json_t *store_elem_parse(const char *text, int n);

/* The engine's value order: nulls last, numbers by value, strings by code
 * point (a column holds one kind); reversed with desc, nulls still last. */
int store_elem_cmp(sqlite3_value *a, sqlite3_value *b, int desc);

#endif
