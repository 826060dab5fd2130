/*
 * numtext: fast, exact conversion of JSON number token text.
 *
 * The evidence reader meets tens of millions of numbers; libc's strtod is
 * correct but slow on the 16-17 digit reals a trace is made of.  This
 * module converts the common shapes itself with provably exact arithmetic
 * (Clinger's fast path, and an extended-precision path that falls back to
 * strtod whenever a double rounding could differ) and hands everything else
 * to strtod, so every result is bit-identical to strtod's.  Input is the
 * text of a token the JSON lexer already validated.
 */
#ifndef DSIGHT_NUMTEXT_H
#define DSIGHT_NUMTEXT_H

#include <stddef.h>
#include <stdint.h>

enum { NUMTEXT_INT = 0, NUMTEXT_REAL, NUMTEXT_BIG };

/* Parses an integer token into *out.  Returns NUMTEXT_INT, NUMTEXT_REAL
 * when the token is a real (has '.', 'e' or 'E'; *out untouched) or
 * NUMTEXT_BIG when it does not fit int64. */
int numtext_int(const char *s, size_t n, int64_t *out);

/* Converts any number token to the nearest double (as strtod does).
 * Returns 0, or -1 when the value overflows to infinity. */
int numtext_real(const char *s, size_t n, double *out);

/* Like numtext_real, and tells whether the token was an integer token. */
int numtext_number(const char *s, size_t n, double *out, int *is_integer);

#endif
