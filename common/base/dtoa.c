/*
 * dtoa: shortest round-trip digits of a double (see dtoa.h).
 *
 * dtoa_shortest (fast, exact): a double v = c * 2^q rounds back from every
 * real in its rounding interval [lower, upper] (closed when c is even: ties
 * read back to even).  Pick the decimal exponent k so that the interval,
 * measured in units of 10^k, is between 1 and 10 wide: it then holds at
 * least one integer and at most one multiple of 10.  If it holds a multiple
 * of 10, that is the unique shortest answer (trailing zeros stripped);
 * otherwise the answer is floor or ceil of v / 10^k, whichever lies inside,
 * or the nearer when both do (even on a tie).
 *
 * The three scaled values (4 lower, 4 v, 4 upper, in units of 10^k) are
 * computed as c * 2^q * 10^-k with a 126-bit G(k) ~ 10^-k / 2^r from the
 * generated table (common/base/dtoa_pow10.inc) and kept "rounded to odd" (floor,
 * with the last bit set when the value is not an integer), which is enough
 * to compare them exactly with integers times 4.  When G(k) is not exact
 * the true value lies strictly between cp*G and cp*(G+1) (scaled); if those
 * two have different integer parts, the true value is either an integer
 * (which happens when 5^k divides it: round values like 1e20) or within
 * 2^-64 below one; the first case is recognised exactly, the second (not
 * seen in tests) goes to the exact slow path.
 */
#include "base/dtoa.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtoa_pow10.inc"

typedef unsigned __int128 u128;

/*
 * For p = 15, 16, 17: print v correctly rounded to p significant digits and
 * keep the first that reads back to v.  When a k <= 15 digit string round
 * trips, rounding v to 15 digits reproduces it (the half-ulp of a double is
 * far below the half-unit of the 15th digit), so trailing zeros stripped from
 * the 15-digit form give the shortest (subnormals have less precision, so
 * there every length from 1 is tried); for 16 and 17 the correctly rounded
 * string is the nearest, so it round-trips whenever any string of that
 * length does, except at a power of two: there the interval below v is half
 * the one above, so the nearest 16-digit string may fall short below while
 * the next one up still reads back (2^-1017 is 7.120236347223045e-307).
 */
static int next_up_round_trips(char *tmp, double v)
{
	char up[40];
	char *e = strchr(tmp, 'e'), *s = e;
	memcpy(up, tmp, (size_t)(e - tmp));
	size_t n = (size_t)(e - tmp);
	int carry = 1;
	while (carry && s-- > tmp) {
		if (*s == '.')
			continue;
		up[s - tmp] = *s == '9' ? '0' : (char)(*s + 1);
		carry = *s == '9';
	}
	if (carry) /* 9.99..9 -> 10.00..0: one more decade */
		snprintf(up + n, sizeof up - n, "e%d", atoi(e + 1) + 1), up[0] = '1';
	else
		snprintf(up + n, sizeof up - n, "%s", e);
	if (strtod(up, NULL) != v)
		return 0;
	strcpy(tmp, up);
	return 1;
}

int dtoa_shortest_slow(double v, char digits[17], int *decpt)
{
	char tmp[40];
	int p, n = 0, pow2;

	for (p = v < DBL_MIN ? 1 : 15; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
		if (p == 17 || strtod(tmp, NULL) == v)
			break;
		if (p == 16 && frexp(v, &pow2) == 0.5 && v >= DBL_MIN && next_up_round_trips(tmp, v))
			break;
	}
	/* tmp is d.ddddde[+-]XX */
	char *e = strchr(tmp, 'e');
	int exp10 = atoi(e + 1);
	for (char *s = tmp; s < e; s++)
		if (*s >= '0' && *s <= '9')
			digits[n++] = *s;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	*decpt = exp10 + 1;
	return n;
}

/* Round-to-odd of cp * G / 2^128 into *out; -1 when G is inexact and the
 * integer part is not certain.  For 1 <= k <= 27 the true value (cp * 2^(q-k)
 * / 5^k up to the shift) is an integer exactly when 5^k divides cp, and then
 * it is the upper of the two candidates. */
static int scaled(uint64_t cp, const uint64_t g[2], int exact, int k, uint64_t *out)
{
	u128 lo = (u128)cp * g[1], hi = (u128)cp * g[0];
	u128 mid = (hi & UINT64_MAX) + (lo >> 64);
	uint64_t top = (uint64_t)(hi >> 64) + (uint64_t)(mid >> 64);
	u128 frac = mid << 64 | (uint64_t)lo; /* the low 128 bits */
	if (exact) {
		*out = top | (frac != 0);
		return 0;
	}
	if (frac + cp < frac) { /* cp * (G + 1) reaches the next integer */
		uint64_t p5 = 1;
		if (k < 1 || k > 27)
			return -1;
		while (k--)
			p5 *= 5;
		if (cp % p5)
			return -1;
		*out = top + 1;
		return 0;
	}
	*out = top | 1;
	return 0;
}

const uint64_t dtoa_pow10_int[20] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
	10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL,
	10000000000000000000ULL};

const char dtoa_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Writes the digits of d * 10^k (d > 0, at most 17 digits) without
 * trailing zeros, two at a time from the right; returns their count. */
static int emit(uint64_t d, int k, char digits[17], int *decpt)
{
	int n;
	char *p;
	while (d % 10000 == 0)
		d /= 10000, k += 4;
	if (d % 100 == 0)
		d /= 100, k += 2;
	if (d % 10 == 0)
		d /= 10, k++;
	n = dtoa_ndigits(d);
	p = digits + n;
	if (d >= 100000000) { /* the low 8 digits, in 32-bit arithmetic */
		uint32_t lo = (uint32_t)(d % 100000000);
		d /= 100000000;
		for (int j = 0; j < 4; j++, lo /= 100)
			p -= 2, memcpy(p, dtoa_pairs + 2 * (lo % 100), 2);
		if (d >= 100000000) {
			lo = (uint32_t)(d % 100000000);
			d /= 100000000;
			for (int j = 0; j < 4; j++, lo /= 100)
				p -= 2, memcpy(p, dtoa_pairs + 2 * (lo % 100), 2);
		}
	}
	uint32_t x = (uint32_t)d;
	for (; x >= 100; x /= 100)
		p -= 2, memcpy(p, dtoa_pairs + 2 * (x % 100), 2);
	if (x >= 10)
		p -= 2, memcpy(p, dtoa_pairs + 2 * x, 2);
	else
		*--p = (char)('0' + x);
	*decpt = n + k;
	return n;
}

int dtoa_shortest(double v, char digits[17], int *decpt)
{
	uint64_t bits, c, vb, vbl, vbr;
	memcpy(&bits, &v, sizeof bits);
	int be = (int)(bits >> 52 & 0x7ff), q;
	uint64_t f = bits & ((1ULL << 52) - 1);

	if (be == 0)
		c = f, q = -1074;
	else
		c = f | 1ULL << 52, q = be - 1075;
	/* Integers below 2^53 print as themselves. */
	if (q <= 0 && q >= -52 && (c & ((1ULL << -q) - 1)) == 0)
		return emit(c >> -q, 0, digits, decpt);

	/* At a power of two the gap below is half the gap above. */
	int irregular = f == 0 && be > 1;
	uint64_t cb = c << 2, cbr = cb + 2, cbl = irregular ? cb - 1 : cb - 2, out = c & 1;
	int k = (int)(((int64_t)q * 661971961083LL - (irregular ? 274743187321LL : 0)) >> 41);
	int h = q + (int)(((int64_t)-k * 913124641741LL) >> 38) + 3; /* 3..6 */
	const uint64_t *g = dtoa_pow10[k - DTOA_K_MIN];
	int exact = k >= DTOA_EXACT_K_MIN && k <= 0;
	if (scaled(cb << h, g, exact, k, &vb) || scaled(cbl << h, g, exact, k, &vbl) ||
	    scaled(cbr << h, g, exact, k, &vbr))
		return dtoa_shortest_slow(v, digits, decpt);

	/* A multiple of 10 inside the interval is the shortest. */
	uint64_t s = vb >> 2, sp = s / 10 * 10, tp = sp + 10;
	int upin = sp > 0 && vbl + out <= sp << 2, wpin = (tp << 2) + out <= vbr;
	if (upin != wpin)
		return emit(upin ? sp : tp, k, digits, decpt);
	/* Otherwise floor or ceil of v / 10^k, the nearer when both fit. */
	uint64_t t = s + 1;
	int uin = vbl + out <= s << 2, win = (t << 2) + out <= vbr;
	if (upin || (!uin && !win)) /* cannot happen; be safe */
		return dtoa_shortest_slow(v, digits, decpt);
	if (uin != win)
		return emit(uin ? s : t, k, digits, decpt);
	uint64_t half = (s << 2) + 2;
	return emit(vb < half || (vb == half && !(s & 1)) ? s : t, k, digits, decpt);
}
