/* numtext: fast exact number text conversion (see numtext.h). */
#include "base/numtext.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && LDBL_MANT_DIG == 64
#define NUMTEXT_X87 1
#endif

int numtext_int(const char *s, size_t n, int64_t *out)
{
	size_t k = 0;
	int neg = 0, over = 0;
	uint64_t v = 0;

	if (n && s[0] == '-')
		neg = 1, k = 1;
	for (; k < n; k++) {
		unsigned d = (unsigned)(unsigned char)s[k] - '0';
		if (d > 9)
			return NUMTEXT_REAL;
		if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v))
			over = 1;
	}
	if (over || v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return NUMTEXT_BIG;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return NUMTEXT_INT;
}

static int slow_real(const char *s, size_t n, double *out)
{
	char tmp[128], *buf = n < sizeof tmp ? tmp : malloc(n + 1);

	if (!buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	if (buf != tmp)
		free(buf);
	return isfinite(*out) ? 0 : -1;
}

static const double pow10d[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#ifdef NUMTEXT_X87
/* 10^k for k <= 27 is exact in a 64-bit significand (5^27 < 2^63). */
static const long double pow10l[28] = {
	1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L,
	1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
	1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight ASCII digits at p as their value, or -1 when they are not all
 * digits (SWAR: one load, a few multiplies). */
static inline int64_t eight_digits(const char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	if (((v & 0xF0F0F0F0F0F0F0F0u) |
	     (((v + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) >> 4)) != 0x3333333333333333u)
		return -1;
	v -= 0x3030303030303030u;
	v = v * 10 + (v >> 8);
	v = (((v & 0x000000FF000000FFu) * (100 + (1000000ull << 32))) +
	     (((v >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32)))) >> 32;
	return (int64_t)v;
}
#else
static inline int64_t eight_digits(const char *p)
{
	(void)p;
	return -1;
}
#endif

/* Accumulates the digit run at s[k..n) into *m (leading zeros skipped while
 * *m is 0); *nd counts significant digits, *cnt all digits.  Returns the
 * end of the run, or (size_t)-1 past 19 significant digits. */
static size_t digit_run(const char *s, size_t k, size_t n, uint64_t *m, int *nd,
                        long *cnt)
{
	size_t k0 = k;
	int64_t v;

	if (*m == 0)
		while (k < n && s[k] == '0')
			k++;
	while (k + 8 <= n && *nd <= 11 && (v = eight_digits(s + k)) >= 0) {
		*m = *m * 100000000u + (uint64_t)v;
		*nd += 8;
		k += 8;
	}
	for (; k < n && (unsigned)(s[k] - '0') <= 9; k++) {
		if (++*nd > 19)
			return (size_t)-1;
		*m = *m * 10 + (uint64_t)(s[k] - '0');
	}
	*cnt += (long)(k - k0);
	return k;
}

int numtext_number(const char *s, size_t n, double *out, int *is_integer)
{
	size_t k = 0;
	int neg = 0, ndig = 0;
	uint64_t m = 0;
	long e = 0, ex = 0, nint = 0;

	*is_integer = 1;
	if (n && s[0] == '-')
		neg = 1, k = 1;
	k = digit_run(s, k, n, &m, &ndig, &nint);
	if (k == (size_t)-1)
		goto slow;
	if (k < n && s[k] == '.') {
		*is_integer = 0;
		k = digit_run(s, k + 1, n, &m, &ndig, &e);
		if (k == (size_t)-1)
			goto slow;
		e = -e;
	}
	if (k < n && (s[k] == 'e' || s[k] == 'E')) {
		int eneg = 0;
		*is_integer = 0;
		k++;
		if (k < n && (s[k] == '-' || s[k] == '+'))
			eneg = s[k++] == '-';
		for (; k < n && (unsigned)(s[k] - '0') <= 9; k++)
			if (ex < 100000)
				ex = ex * 10 + (s[k] - '0');
		e += eneg ? -ex : ex;
	}
	if (k != n)
		goto slow;
	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return 0;
	}
	if (m < (UINT64_C(1) << 53) && e >= -22 && e <= 22) {
		double d = (double)m;
		d = e >= 0 ? d * pow10d[e] : d / pow10d[-e];
		*out = neg ? -d : d;
		return 0;
	}
#ifdef NUMTEXT_X87
	if (e >= -27 && e <= 27) {
		/* One correctly rounded 64-bit operation on exact operands; the
		 * rounding to 53 bits is then exact unless q sits exactly on a
		 * midpoint between two doubles (low 11 bits 100 0000 0000). */
		long double q = (long double)m;
		q = e >= 0 ? q * pow10l[e] : q / pow10l[-e];
		uint64_t bits;
		memcpy(&bits, &q, sizeof bits);
		if ((bits & 0x7ff) != 0x400) {
			double d = (double)q;
			*out = neg ? -d : d;
			return 0;
		}
	}
#endif
slow:
	for (size_t j = 0; j < n; j++)
		if (s[j] == '.' || s[j] == 'e' || s[j] == 'E')
			*is_integer = 0;
	return slow_real(s, n, out);
}

int numtext_real(const char *s, size_t n, double *out)
{
	int is_integer;
	return numtext_number(s, n, out, &is_integer);
}
