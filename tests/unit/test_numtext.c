/* Unit tests of common/numtext: results bit-identical to strtod. */
#include "testlib.h"

#include <math.h>
#include <stdint.h>

#include "base/numtext.h"

static int same_as_strtod(const char *s)
{
	double a = strtod(s, NULL), b = 0;
	int rc = numtext_real(s, strlen(s), &b);
	if (!isfinite(a))
		return rc == -1;
	if (rc != 0 || memcmp(&a, &b, sizeof a) != 0) {
		fprintf(stderr, "  %s: strtod %.17g, numtext %.17g (rc %d)\n", s, a, b, rc);
		return 0;
	}
	return 1;
}

TEST(real_edge_cases)
{
	static const char *const cases[] = {
		"0", "-0", "0.0", "-0.0", "1", "1.5", "1.50", "1E2", "1e+2", "1e-2",
		"0.1", "0.2", "0.30000000000000004", "123.45678901234567",
		"9007199254740993", "9007199254740993.0", "9007199254740992.5",
		"18446744073709551615", "100000000000000000000",
		"9223372036854775807", "-9223372036854775808", "1e23", "8.98846567431158e307",
		"1.7976931348623157e308", "1.7976931348623159e308", "1e309", "-1e999",
		"2.2250738585072011e-308", "2.2250738585072014e-308", "4.9e-324", "5e-324",
		"2e-324", "1e-400", "0.000000000000000000000000000001",
		"1234567890123456789", "12345678901234567890", "1.234567890123456789e-5",
		"0.00012345678901234567", "7.2057594037927933e16", "3.0000000000000004",
		"1152921504606846975.5", "2.5e-27", "9.999999999999999e22",
		"1e22", "1e27", "1e28", "123456789012345678e-27", "4503599627370497.5",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(same_as_strtod(cases[i]));
}

TEST(real_random_sweep)
{
	static const char *const fmt[] = {
		"%.17g", "%.16g", "%.15g", "%.3f", "%.9e", "%.12f", "%.18g", "%.19g", "%.6f", "%.1f",
	};
	char b[64];
	uint64_t x = 88172645463325252u;
	int bad = 0;

	for (long i = 0; i < 200000 && bad < 5; i++) {
		double d;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0: d = (double)(x >> 11) / 9007199254740992.0 * 1000; break;
		case 1: d = ldexp((double)(x >> 40), (int)(x % 90) - 60); break;
		case 2: d = (double)(x % 1000000) * 1e-9 + (double)(x % 900); break;
		default:
			memcpy(&d, &x, sizeof d);
			if (!isfinite(d))
				d = 1.5;
		}
		snprintf(b, sizeof b, fmt[i % 10], d);
		if (!same_as_strtod(b))
			bad++;
	}
	CHECK_EQ(bad, 0);
}

TEST(integers)
{
	int64_t v = 0;
	CHECK(numtext_int("0", 1, &v) == NUMTEXT_INT && v == 0);
	CHECK(numtext_int("-17", 3, &v) == NUMTEXT_INT && v == -17);
	CHECK(numtext_int("9223372036854775807", 19, &v) == NUMTEXT_INT && v == INT64_MAX);
	CHECK(numtext_int("-9223372036854775808", 20, &v) == NUMTEXT_INT && v == INT64_MIN);
	CHECK_EQ(numtext_int("9223372036854775808", 19, &v), NUMTEXT_BIG);
	CHECK_EQ(numtext_int("-9223372036854775809", 20, &v), NUMTEXT_BIG);
	CHECK_EQ(numtext_int("18446744073709551616", 20, &v), NUMTEXT_BIG);
	CHECK_EQ(numtext_int("100000000000000000000000000", 27, &v), NUMTEXT_BIG);
	CHECK_EQ(numtext_int("1.0", 3, &v), NUMTEXT_REAL);
	CHECK_EQ(numtext_int("1e5", 3, &v), NUMTEXT_REAL);
	CHECK_EQ(numtext_int("99999999999999999999.5", 22, &v), NUMTEXT_REAL);
}

int main(void)
{
	RUN(real_edge_cases);
	RUN(real_random_sweep);
	RUN(integers);
	return testlib_done();
}
