/* num: exact JSON numbers (see num.h). */
#include "base/num.h"
#include "base/jsonout.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int num_is_integer_token(const char *text, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (text[k] == '.' || text[k] == 'e' || text[k] == 'E')
			return 0;
	return 1;
}

int num_parse(const char *text, size_t len, struct num *out)
{
	char tmp[64];
	char *end;

	memset(out, 0, sizeof *out);
	if (len == 0)
		return -1;
	if (num_is_integer_token(text, len)) {
		if (len < sizeof tmp) {
			memcpy(tmp, text, len);
			tmp[len] = '\0';
			errno = 0;
			long long v = strtoll(tmp, &end, 10);
			if (*end != '\0')
				return -1;
			if (errno == 0) {
				out->kind = NUM_INT;
				out->i = v;
				out->d = (double)v;
				return 0;
			}
		}
		/* Validate digits: optional '-', then digits only. */
		size_t k = text[0] == '-' ? 1 : 0;
		if (k == len)
			return -1;
		for (; k < len; k++)
			if (text[k] < '0' || text[k] > '9')
				return -1;
		out->kind = NUM_BIG;
		out->big = text;
		out->big_len = len;
		out->d = num_to_double(out);
		return 0;
	}
	{
		char *s = len < sizeof tmp ? tmp : malloc(len + 1);
		if (!s)
			return -1;
		memcpy(s, text, len);
		s[len] = '\0';
		out->kind = NUM_REAL;
		out->d = strtod(s, &end);
		int bad = *end != '\0' || !isfinite(out->d);
		if (s != tmp)
			free(s);
		return bad ? -1 : 0;
	}
}

double num_to_double(const struct num *n)
{
	switch (n->kind) {
	case NUM_INT:
		return (double)n->i;
	case NUM_REAL:
		return n->d;
	case NUM_BIG: {
		char tmp[512];
		char *s = n->big_len < sizeof tmp ? tmp : malloc(n->big_len + 1);
		double d;
		if (!s)
			return n->big[0] == '-' ? -HUGE_VAL : HUGE_VAL;
		memcpy(s, n->big, n->big_len);
		s[n->big_len] = '\0';
		d = strtod(s, NULL);
		if (s != tmp)
			free(s);
		return d;
	}
	default:
		return 0.0;
	}
}

/* Compares two decimal integer strings (optional '-', no leading zeros
 * except "0" itself) exactly. */
static int cmp_decimal(const char *a, size_t alen, const char *b, size_t blen)
{
	int aneg = alen && a[0] == '-', bneg = blen && b[0] == '-';
	int sign;

	if (aneg != bneg)
		return aneg ? -1 : 1;
	sign = aneg ? -1 : 1;
	a += aneg, alen -= (size_t)aneg;
	b += bneg, blen -= (size_t)bneg;
	while (alen > 1 && a[0] == '0')
		a++, alen--;
	while (blen > 1 && b[0] == '0')
		b++, blen--;
	if (alen != blen)
		return alen < blen ? -sign : sign;
	int c = memcmp(a, b, alen);
	return c < 0 ? -sign : c > 0 ? sign : 0;
}

/* Exact comparison of an int64 with a finite double. */
static int cmp_int_real(int64_t i, double d)
{
	if (d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	double t = trunc(d);
	int64_t ti = (int64_t)t;
	if (i != ti)
		return i < ti ? -1 : 1;
	double frac = d - t;
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/* Exact comparison of a big integer (|v| >= 2^63) with a finite double. */
static int cmp_big_real(const struct num *a, double d)
{
	int neg = a->big[0] == '-';
	char tmp[400];

	if (fabs(d) < 9223372036854775808.0)
		return neg ? -1 : 1;
	/* |d| >= 2^63: d is an integer; glibc prints its exact decimal. */
	int n = snprintf(tmp, sizeof tmp, "%.0f", d);
	return cmp_decimal(a->big, a->big_len, tmp, (size_t)n);
}

int num_cmp(const struct num *a, const struct num *b)
{
	if (a->kind == NUM_REAL && b->kind == NUM_REAL)
		return a->d < b->d ? -1 : a->d > b->d ? 1 : 0;
	if (a->kind == NUM_INT && b->kind == NUM_INT)
		return a->i < b->i ? -1 : a->i > b->i ? 1 : 0;
	if (a->kind == NUM_INT && b->kind == NUM_REAL)
		return cmp_int_real(a->i, b->d);
	if (a->kind == NUM_REAL && b->kind == NUM_INT)
		return -cmp_int_real(b->i, a->d);
	if (a->kind == NUM_BIG && b->kind == NUM_BIG)
		return cmp_decimal(a->big, a->big_len, b->big, b->big_len);
	if (a->kind == NUM_BIG && b->kind == NUM_INT)
		return a->big[0] == '-' ? -1 : 1;
	if (a->kind == NUM_INT && b->kind == NUM_BIG)
		return b->big[0] == '-' ? 1 : -1;
	if (a->kind == NUM_BIG)
		return cmp_big_real(a, b->d);
	return -cmp_big_real(b, a->d);
}

void num_emit(struct buf *b, const struct num *n)
{
	switch (n->kind) {
	case NUM_INT:
		jsonout_int(b, n->i);
		break;
	case NUM_BIG:
		buf_append(b, n->big, n->big_len);
		break;
	case NUM_REAL:
		jsonout_real(b, n->d);
		break;
	default:
		buf_append(b, "null", 4);
	}
}
