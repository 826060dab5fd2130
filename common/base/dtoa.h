/*
 * dtoa: shortest round-trip decimal digits of a double.
 *
 * dtoa_shortest finds the shortest digit string that reads back to exactly
 * v (and, among those, the one nearest v): the digits Python's repr prints.
 * Formatting (fixed vs scientific) belongs to jsonout.
 */
#ifndef DSIGHT_DTOA_H
#define DSIGHT_DTOA_H

#include <stdint.h>

/* v must be finite and > 0.  Writes 1..17 ASCII digits (no trailing zeros,
 * not NUL-terminated) to digits and sets *decpt so that
 * v == 0.DIGITS x 10^decpt when read back.  Returns the digit count. */
int dtoa_shortest(double v, char digits[17], int *decpt);

/* "00" "01" ... "99": the two digits of n at dtoa_pairs + 2 * n, for
 * printing numbers two digits at a time (also jsonout_int). */
extern const char dtoa_pairs[201];

/* 10^0 .. 10^19 */
extern const uint64_t dtoa_pow10_int[20];

/* The number of decimal digits of u (1 for 0). */
static inline int dtoa_ndigits(uint64_t u)
{
	int n = (64 - __builtin_clzll(u | 1)) * 1233 >> 12; /* digits - 1 or - 0 */
	n += u >= dtoa_pow10_int[n];
	return n + (n == 0);
}

/* The reference implementation (printf + strtod round trips): exact but
 * slow.  Same contract as dtoa_shortest; used by tests and as a fallback. */
int dtoa_shortest_slow(double v, char digits[17], int *decpt);

#endif
