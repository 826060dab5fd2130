/* Unit tests: testlib itself (the comparison macros compare mathematically
 * across signedness and print both values when they fail). */
#include <stdint.h>
#include <stdio.h>

#include "testlib.h"

/* Runs one comparison that must fail with stderr captured; returns what it
 * printed (static buffer) and undoes its failure count. */
#define CAPTURE(stmt, out)                                                 \
	do {                                                               \
		FILE *tmp_ = tmpfile();                                    \
		int saved_ = dup(2), before_ = testlib_failed_checks;      \
		fflush(stderr);                                            \
		dup2(fileno(tmp_), 2);                                     \
		stmt;                                                      \
		fflush(stderr);                                            \
		dup2(saved_, 2);                                           \
		close(saved_);                                             \
		rewind(tmp_);                                              \
		size_t n_ = fread(out, 1, sizeof out - 1, tmp_);           \
		out[n_] = '\0';                                            \
		fclose(tmp_);                                              \
		failed_ = testlib_failed_checks - before_;                 \
		testlib_failed_checks = before_;                           \
	} while (0)

TEST(failing_comparison_prints_both_values)
{
	char out[512];
	int failed_;
	long got = 41;
	CAPTURE(CHECK_EQ(got, 42), out);
	CHECK_EQ(failed_, 1);
	CHECK(strstr(out, "CHECK(got == 42) failed: 41 == 42 is false") != NULL);
	double x = 0.5;
	CAPTURE(CHECK_GT(x, 1), out);
	CHECK_EQ(failed_, 1);
	CHECK(strstr(out, "CHECK(x > 1) failed: 0.5 > 1 is false") != NULL);
	CAPTURE(CHECK_EQ(got, 41), out);
	CHECK_EQ(failed_, 0);
	CHECK_STR(out, "");
}

TEST(comparisons_are_mathematical)
{
	CHECK_EQ(testlib_cmp(TESTLIB_VAL(-1), TESTLIB_VAL((size_t)-1)), -1);
	CHECK_EQ(testlib_cmp(TESTLIB_VAL((uint64_t)UINT64_MAX), TESTLIB_VAL((int64_t)-1)), 1);
	CHECK_EQ(testlib_cmp(TESTLIB_VAL(3u), TESTLIB_VAL(3)), 0);
	CHECK_EQ(testlib_cmp(TESTLIB_VAL(-5), TESTLIB_VAL(-7)), 1);
	CHECK_EQ(testlib_cmp(TESTLIB_VAL(2.5), TESTLIB_VAL(2)), 1);
	CHECK_EQ(testlib_cmp(TESTLIB_VAL(0.0 / 0.0), TESTLIB_VAL(0.0)), 2); /* NaN: unordered */
	CHECK_NE(0.0 / 0.0, 0.0 / 0.0);
	CHECK_LE(-1, 0u);
	CHECK_GE((unsigned char)200, (signed char)-100);
}

int main(void)
{
	RUN(failing_comparison_prints_both_values);
	RUN(comparisons_are_mathematical);
	return testlib_done();
}
