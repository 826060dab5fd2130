/*
 * qorder: the `sort` parameter: the sort keys of each kind, their
 * validation, sort values with their order (nulls last in both
 * directions, numbers by value, strings by code point) and a stable sort
 * of catalog objects whose ties keep the kind's default order.  Backend
 * neutral: it sees elements, never where they come from.
 */
#ifndef DSIGHT_QORDER_H
#define DSIGHT_QORDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "query/qparams.h"

struct qorder_key {
	const char *name; /* without its "-" */
	int desc;
};

struct qorder {
	struct qorder_key *keys; /* malloc'd; NULL when n == 0 */
	size_t n;
};

/* One sort value.  Anything that is not a number or a string sorts as
 * null; numbers sort before strings. */
enum qval_type { QV_NUMBER, QV_STRING, QV_NULL };
struct qval {
	enum qval_type type;
	int is_int;        /* number: i holds it exactly */
	int64_t i;
	double d;
	const char *s;     /* string (borrowed) */
	size_t len;
};

/* The sort keys of kind in their documented order (NULL-ended), or NULL
 * when the kind takes no sort. */
const char *const *qorder_keys(const char *kind);

/* A new JSON array of every sort key of every kind, plain and with "-"
 * (the MCP schema's enum).  The caller owns it. */
json_t *qorder_key_enum(void);

/*
 * Parses p->sort for kind into *o (o->n == 0 when no sort applies).
 * ERR_USAGE "Unknown sort key '<k>' for <kind>; choose from <keys>".
 * *o owns its keys: qorder_free.
 */
int qorder_parse(const char *kind, const struct qlist *sort, struct qorder *o,
                 struct err *e);
/* The same against the keys given (NULL-ended), e.g. the sort keys of
 * groups (--group-by). */
int qorder_parse_keys(const char *kind, const char *const *keys,
                      const struct qlist *sort, struct qorder *o,
                      struct err *e);
void qorder_free(struct qorder *o);

/* A catalog JSON value as a sort value. */
void qval_of_json(const json_t *v, struct qval *out);
void qval_number(double d, struct qval *out);
void qval_int(int64_t i, struct qval *out);
/* Compares a and b in the direction desc; nulls last either way. */
int qval_cmp(const struct qval *a, const struct qval *b, int desc);

/* The value of sort key `key` (a known key of kind) for catalog object
 * obj of that kind (requests, server_spans, iterations, sessions). */
void qorder_value_of(const char *kind, const char *key, const json_t *obj,
                     struct qval *out);

/*
 * Sorts elems[0..n) (catalog objects of kind, in their default order)
 * stably by o.  0 or ERR_NOMEM (e filled).
 */
int qorder_sort_objects(const struct qorder *o, const char *kind,
                        const json_t **elems, size_t n, struct err *e);

#endif
