/*
 * testlib: a tiny unit-test harness.  Each test runs in its own forked
 * process (a crash or sanitizer abort fails that test only) and prints one
 * TAP line; tests/run counts them.  In a sanitizer build the child runs
 * LeakSanitizer before it exits, and a leak fails the test.
 *
 *   TEST(name) { CHECK(ok); CHECK_EQ(n, 3); CHECK_STR(a, b); }
 *   int main(void) { RUN(name); ...; return testlib_done(); }
 *
 * CHECK_EQ/NE/LT/LE/GT/GE(a, b) compare two numbers (integers, doubles,
 * bools; strings by pointer are not numbers: use CHECK_STR) and print both
 * values on failure; CHECK(cond) prints the expression.
 */
#ifndef DSIGHT_TESTLIB_H
#define DSIGHT_TESTLIB_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TESTLIB_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESTLIB_LSAN 1
#endif
#endif
#ifdef TESTLIB_LSAN
#include <sanitizer/lsan_interface.h>
#endif

static int testlib_failed_checks;
static int testlib_passed, testlib_failed;

#define TEST(name) static void test_##name(void)

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",     \
			        __FILE__, __LINE__, #cond);                \
			testlib_failed_checks++;                           \
		}                                                          \
	} while (0)

/* Both operands are widened once: integers to intmax_t/uintmax_t,
 * floating point to long double; the comparison uses the widened values. */
enum testlib_kind { TESTLIB_INT, TESTLIB_UINT, TESTLIB_FLT };
struct testlib_val {
	enum testlib_kind kind;
	intmax_t i;
	uintmax_t u;
	long double f;
};
static inline struct testlib_val testlib_i(intmax_t v)
{
	struct testlib_val r = { TESTLIB_INT, v, 0, 0 };
	return r;
}
static inline struct testlib_val testlib_u(uintmax_t v)
{
	struct testlib_val r = { TESTLIB_UINT, 0, v, 0 };
	return r;
}
static inline struct testlib_val testlib_f(long double v)
{
	struct testlib_val r = { TESTLIB_FLT, 0, 0, v };
	return r;
}
#define TESTLIB_VAL(x)                                                     \
	_Generic((x), float: testlib_f, double: testlib_f,                 \
	         long double: testlib_f, unsigned char: testlib_u,         \
	         unsigned short: testlib_u, unsigned int: testlib_u,       \
	         unsigned long: testlib_u, unsigned long long: testlib_u,  \
	         default: testlib_i)(x)

/* -1, 0, 1 as a < b, a == b, a > b; 2 when unordered (NaN). */
static inline int testlib_cmp(struct testlib_val a, struct testlib_val b)
{
	if (a.kind == TESTLIB_FLT || b.kind == TESTLIB_FLT) {
		long double x = a.kind == TESTLIB_FLT ? a.f
		                : a.kind == TESTLIB_UINT ? (long double)a.u
		                                         : (long double)a.i;
		long double y = b.kind == TESTLIB_FLT ? b.f
		                : b.kind == TESTLIB_UINT ? (long double)b.u
		                                         : (long double)b.i;
		return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
	}
	if (a.kind == TESTLIB_INT && a.i < 0)
		return b.kind == TESTLIB_INT && b.i < a.i ? 1
		       : b.kind == TESTLIB_INT && b.i == a.i ? 0 : -1;
	if (b.kind == TESTLIB_INT && b.i < 0)
		return 1;
	uintmax_t x = a.kind == TESTLIB_UINT ? a.u : (uintmax_t)a.i;
	uintmax_t y = b.kind == TESTLIB_UINT ? b.u : (uintmax_t)b.i;
	return x < y ? -1 : x > y;
}

static inline void testlib_print(struct testlib_val v)
{
	if (v.kind == TESTLIB_FLT)
		fprintf(stderr, "%.17Lg", v.f);
	else if (v.kind == TESTLIB_UINT)
		fprintf(stderr, "%" PRIuMAX, v.u);
	else
		fprintf(stderr, "%" PRIdMAX, v.i);
}

static inline void testlib_check_cmp(int ok, struct testlib_val a,
                                     struct testlib_val b, const char *op,
                                     const char *as, const char *bs,
                                     const char *file, int line)
{
	if (ok)
		return;
	fprintf(stderr, "  %s:%d: CHECK(%s %s %s) failed: ", file, line, as, op,
	        bs);
	testlib_print(a);
	fprintf(stderr, " %s ", op);
	testlib_print(b);
	fprintf(stderr, " is false\n");
	testlib_failed_checks++;
}

#define TESTLIB_CMP(a, b, op, test)                                        \
	do {                                                               \
		struct testlib_val a_ = TESTLIB_VAL(a), b_ = TESTLIB_VAL(b);\
		int c_ = testlib_cmp(a_, b_);                              \
		testlib_check_cmp(test, a_, b_, op, #a, #b, __FILE__,      \
		                  __LINE__);                               \
	} while (0)
#define CHECK_EQ(a, b) TESTLIB_CMP(a, b, "==", c_ == 0)
#define CHECK_NE(a, b) TESTLIB_CMP(a, b, "!=", c_ != 0)
#define CHECK_LT(a, b) TESTLIB_CMP(a, b, "<", c_ == -1)
#define CHECK_LE(a, b) TESTLIB_CMP(a, b, "<=", c_ == -1 || c_ == 0)
#define CHECK_GT(a, b) TESTLIB_CMP(a, b, ">", c_ == 1)
#define CHECK_GE(a, b) TESTLIB_CMP(a, b, ">=", c_ == 1 || c_ == 0)

#define CHECK_STR(a, b)                                                    \
	do {                                                               \
		const char *a_ = (a), *b_ = (b);                           \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                   \
			fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n",     \
			        __FILE__, __LINE__, a_ ? a_ : "(null)",    \
			        b_ ? b_ : "(null)");                       \
			testlib_failed_checks++;                           \
		}                                                          \
	} while (0)

static inline void testlib_run(const char *name, void (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		fflush(stdout);
#ifdef TESTLIB_LSAN
		/* _exit skips LeakSanitizer's exit-time check: run it here
		 * (it reports on stderr; it is a no-op with detect_leaks=0,
		 * which tests/run never sets). */
		if (__lsan_do_recoverable_leak_check()) {
			fprintf(stderr, "  %s: LeakSanitizer found a leak\n", name);
			_exit(1);
		}
#endif
		_exit(testlib_failed_checks ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok - %s\n", name);
		testlib_passed++;
	} else {
		printf("not ok - %s\n", name);
		if (WIFSIGNALED(status))
			printf("#   killed by signal %d\n", WTERMSIG(status));
		testlib_failed++;
	}
	fflush(stdout);
}

#define RUN(name) testlib_run(#name, test_##name)

static inline int testlib_done(void)
{
	return testlib_failed ? 1 : 0;
}

#endif
