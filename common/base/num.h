/*
 * num: one JSON number as read from evidence, kept exactly.
 *
 * Integer tokens stay integers (int64, or their exact digits when they do not
 * fit 64 bits: metric point values may be any size); real tokens become
 * doubles.  num_cmp compares any two exactly (an integer against a double
 * with no rounding); num_emit prints the kind back (reals in Python repr
 * form via jsonout).
 */
#ifndef DSIGHT_NUM_H
#define DSIGHT_NUM_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum num_kind { NUM_NULL = 0, NUM_INT, NUM_BIG, NUM_REAL };

struct num {
	enum num_kind kind;
	int64_t i;          /* NUM_INT */
	double d;           /* NUM_REAL; for NUM_INT/NUM_BIG the nearest double */
	const char *big;    /* NUM_BIG: exact decimal digits with optional '-';
	                       not owned: points into the caller's storage */
	size_t big_len;
};

/* Parses the text of one JSON number token (as yajl hands it over).
 * Returns 0, or -1 when a real token overflows to infinity (1e999) or the
 * text is not a number.  out->big points into text (caller keeps it alive). */
int num_parse(const char *text, size_t len, struct num *out);

/* True when the token text is an integer token (no '.', 'e' or 'E'). */
int num_is_integer_token(const char *text, size_t len);

/* Exact three-way comparison of two non-null numbers (-1, 0, 1). */
int num_cmp(const struct num *a, const struct num *b);

/* The value as a double (big integers through strtod). */
double num_to_double(const struct num *n);

/* Appends the number (null for NUM_NULL) to b. */
void num_emit(struct buf *b, const struct num *n);

#endif
