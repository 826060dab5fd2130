/* Unit tests: dtoa_shortest (fast) against dtoa_shortest_slow (exact reference). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtoa.h"
#include "testlib.h"

/* Fewer random rows under the sanitizers and in the quick tier
 * (DSIGHT_TEST_LONG unset or 0): the full tier's plain build covers
 * millions. */
#ifdef __SANITIZE_ADDRESS__
#define RANDOM_ROWS_LONG 200000
#else
#define RANDOM_ROWS_LONG 2000000
#endif
#define RANDOM_ROWS_QUICK 200000

static long random_rows(void)
{
	const char *v = getenv("DSIGHT_TEST_LONG");
	return v && *v && strcmp(v, "0") ? RANDOM_ROWS_LONG : RANDOM_ROWS_QUICK;
}

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static double from_bits(uint64_t b)
{
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

/* 1 when fast and slow agree on v (v finite, > 0); prints the first few
 * disagreements. */
static int same(double v)
{
	static int shown;
	char a[17], b[17];
	int pa, pb, na = dtoa_shortest(v, a, &pa), nb = dtoa_shortest_slow(v, b, &pb);
	if (na == nb && pa == pb && memcmp(a, b, (size_t)na) == 0)
		return 1;
	if (shown++ < 5)
		printf("# %a: fast %.*s e%d, slow %.*s e%d\n", v, na, a, pa, nb, b, pb);
	return 0;
}

static int digits_are(double v, const char *want, int want_decpt)
{
	char d[17];
	int decpt, n = dtoa_shortest(v, d, &decpt);
	return n == (int)strlen(want) && memcmp(d, want, (size_t)n) == 0 && decpt == want_decpt;
}

TEST(special_values)
{
	CHECK(digits_are(5e-324, "5", -323));
	CHECK(digits_are(1e-323, "1", -322));
	CHECK(digits_are(DBL_MAX, "17976931348623157", 309));
	CHECK(digits_are(DBL_MIN, "22250738585072014", -307));
	CHECK(digits_are(0.1, "1", 0));
	CHECK(digits_are(0.3, "3", 0));
	CHECK(digits_are(0.1 + 0.2, "30000000000000004", 0));
	CHECK(digits_are(9.100000001, "9100000001", 1));
	CHECK(digits_are(2.1000000001, "21000000001", 1));
	CHECK(digits_are(1e23, "1", 24));
	CHECK(digits_are(1e22, "1", 23));
	CHECK(digits_are(1e-30, "1", -29));
	CHECK(digits_are(1.0, "1", 1));
	CHECK(digits_are(2.0, "2", 1));
	CHECK(digits_are(123.456789, "123456789", 3));
	CHECK(digits_are(123456789012345.0, "123456789012345", 15));
	CHECK(digits_are(9007199254740991.0, "9007199254740991", 16));
	CHECK(digits_are(9007199254740992.0, "9007199254740992", 16));
	CHECK(digits_are(1.0 / 3.0, "3333333333333333", 0));
	CHECK(digits_are(2.2250738585072009e-308, "2225073858507201", -307)); /* largest subnormal */
	CHECK(digits_are(ldexp(1.0, -1017), "7120236347223045", -306)); /* short gap below */
	double specials[] = {5e-324, DBL_MAX, DBL_MIN, 0.1, 9.100000001, 1e23, 1e22, 1e21, 1e16,
	                     4.35, 5e-310, 1.7e308, 8.41e21, 5.764607523034235e39, 1e100};
	for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
		CHECK(same(specials[k]));
}

TEST(powers_of_two_and_ten)
{
	for (int e = -1074; e <= 1023; e++) {
		double v = ldexp(1.0, e);
		CHECK(same(v));
		CHECK(v == 5e-324 || same(nextafter(v, 0)));
		CHECK(e == 1023 || same(nextafter(v, INFINITY)));
	}
	char txt[16];
	for (int e = -323; e <= 308; e++) {
		snprintf(txt, sizeof txt, "1e%d", e);
		double v = strtod(txt, NULL);
		CHECK(digits_are(v, "1", e + 1));
		CHECK(same(nextafter(v, 0)) && same(nextafter(v, INFINITY)));
		if (testlib_failed_checks)
			return;
	}
}

TEST(subnormals)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	for (uint64_t m = 1; m < 20000; m++)
		CHECK(same(from_bits(m)));
	for (int k = 0; k < 100000; k++)
		{
		uint64_t m = xs(&x) & ((1ULL << 52) - 1);
		CHECK(m == 0 || same(from_bits(m)));
	}
}

TEST(every_exponent_edges)
{
	/* For every binary exponent: the power of two (short gap below), its
	 * neighbour, the largest mantissa, and integers near 2^53. */
	for (uint64_t be = 1; be < 2047; be++) {
		CHECK(same(from_bits(be << 52)));
		CHECK(same(from_bits(be << 52 | 1)));
		CHECK(same(from_bits(be << 52 | ((1ULL << 52) - 1))));
	}
	for (uint64_t n = (1ULL << 53) - 5000; n < (1ULL << 53) + 5000; n++)
		CHECK(same((double)n));
	for (int k = 1; k < 100000; k++)
		CHECK(same((double)k * 1e17) && same((double)k * 1e-3) && same((double)k));
}

TEST(random_bit_patterns)
{
	uint64_t x = 88172645463325252ULL;
	long bad = 0;
	for (long k = 0, n = random_rows(); k < n; k++) {
		double v = fabs(from_bits(xs(&x)));
		if (!isfinite(v) || v == 0)
			continue;
		bad += !same(v);
	}
	CHECK_EQ(bad, 0);
}

TEST(realistic_times_and_values)
{
	uint64_t x = 0x853c49e6748fea9bULL;
	long bad = 0;
	for (long k = 0, n = random_rows() / 3; k < n; k++) {
		uint64_t r = xs(&x);
		bad += !same((double)(r % 900000000000ULL + 1) / 1e9);  /* ns as seconds */
		bad += !same((double)(r % 1000000 + 1) / 100.0);         /* 2 decimals */
		bad += !same((double)(r >> 11) * 0x1p-53 * 350.0 + 1e-9); /* full precision */
	}
	CHECK_EQ(bad, 0);
}

int main(void)
{
	RUN(special_values);
	RUN(powers_of_two_and_ten);
	RUN(subnormals);
	RUN(every_exponent_edges);
	RUN(random_bit_patterns);
	RUN(realistic_times_and_values);
	return testlib_done();
}
