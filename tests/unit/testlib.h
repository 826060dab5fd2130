/*
 * testlib: a tiny unit-test harness.  Each test runs in its own forked
 * process (a crash or sanitizer abort fails that test only) and prints one
 * TAP line; tests/run counts them.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_STR(a, b); }
 *   int main(void) { RUN(name); ...; return testlib_done(); }
 */
#ifndef DSIGHT_TESTLIB_H
#define DSIGHT_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
		_exit(testlib_failed_checks ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok - %s\n", name);
		testlib_passed++;
	} else {
		printf("not ok - %s\n", name);
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
