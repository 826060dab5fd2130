/* Unit tests: daemon/lifetime (--idle-timeout and --idle-start parsing, the
 * duration format of exit reasons).  The daemon is not a library, so its
 * module is compiled in here. */
#include "../../daemon/lifetime.c"

#include "testlib.h"

static int64_t ms_of(const char *s)
{
	struct err e;
	int64_t ms = 12345;
	if (lifetime_parse_timeout(s, &ms, &e))
		return -2;
	return ms;
}

TEST(idle_timeout_forms)
{
	CHECK_EQ(ms_of("auto"), 1800000);
	CHECK_EQ(ms_of("90"), 90000);
	CHECK_EQ(ms_of("45s"), 45000);
	CHECK_EQ(ms_of("10m"), 600000);
	CHECK_EQ(ms_of("1h"), 3600000);
	CHECK_EQ(ms_of("1s"), 1000);
	CHECK_EQ(ms_of("0"), -1);
	CHECK_EQ(ms_of("0s"), -1);
	CHECK_EQ(ms_of("off"), -1);
	CHECK_EQ(ms_of("never"), -1);
	CHECK_EQ(ms_of("1.5s"), 1500);
	CHECK_EQ(ms_of("0.5m"), 30000);
	CHECK_EQ(ms_of("2.25h"), 8100000);
	CHECK_EQ(ms_of("0.0s"), -1);
}

TEST(idle_timeout_refusals)
{
	struct err e;
	int64_t ms;
	const char *bad[] = {"", "s", "5x", "-1", "1.5", ".5s", "1.s", "1..5s", "1.5.5s", "10mm", "1d", " 5", "5 ", "auto2",
	                     "99999999999999999999", NULL};
	for (int k = 0; bad[k]; k++) {
		CHECK_EQ(lifetime_parse_timeout(bad[k], &ms, &e), ERR_USAGE);
		CHECK(strstr(e.msg, "--idle-timeout") != NULL);
	}
}

TEST(idle_start_modes)
{
	struct err e;
	int m = -1;
	CHECK(lifetime_parse_start("auto", &m, &e) == 0 && m == LIFETIME_AUTO);
	CHECK(lifetime_parse_start("orphaned", &m, &e) == 0 && m == LIFETIME_ORPHANED);
	CHECK(lifetime_parse_start("last-query", &m, &e) == 0 && m == LIFETIME_LAST_QUERY);
	CHECK_EQ(lifetime_parse_start("sometimes", &m, &e), ERR_USAGE);
	CHECK_STR(lifetime_start_name(LIFETIME_ORPHANED), "orphaned");
	CHECK_STR(lifetime_start_name(LIFETIME_LAST_QUERY), "last-query");
}

static const char *dur(uint64_t ms)
{
	static char out[48];
	lifetime_format_duration(out, sizeof out, ms);
	return out;
}

TEST(duration_format)
{
	CHECK_STR(dur(1800000), "30m0s");
	CHECK_STR(dur(3600000), "1h0m0s");
	CHECK_STR(dur(3723000), "1h2m3s");
	CHECK_STR(dur(1000), "1s");
	CHECK_STR(dur(1250), "1.25s");
	CHECK_STR(dur(90500), "1m30.5s");
	CHECK_STR(dur(0), "0s");
}

int main(void)
{
	RUN(idle_timeout_forms);
	RUN(idle_timeout_refusals);
	RUN(idle_start_modes);
	RUN(duration_format);
	return testlib_done();
}
