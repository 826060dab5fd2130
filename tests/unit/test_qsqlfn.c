/* test_qsqlfn: the sql kind's bounded functions answer exactly what
 * SQLite's own answer (random inputs, compared in process), and end when
 * the statement's clock runs out. */
#include <sqlite3.h>
#include <time.h>

#include "query/qsqlfn.h"
#include "testlib.h"

/* Random bytes biased towards the characters the functions treat
 * specially, ASCII letters of both cases, multi-byte and invalid UTF-8. */
static size_t rand_text(unsigned *seed, unsigned char *out, size_t cap)
{
	static const char *const pieces[] = {
		"a", "A", "b", "B", "z", "%", "_", "*", "?", "[", "]", "^",
		"-", "\\", "x", "ab", "aB", "\xc3\xa9", "\xc3\x89",
		"\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80", "\xbf", "\xc3",
		"\xe2\x82", "\xed\xa0\x80", "\xef\xbf\xbe", "\xc0\x80", "\xff",
		" ", "aaa", "%a", "_a", "[a-c]", "[^b]", "[]]", "[a-]",
	};
	size_t n = 0, want = (size_t)(rand_r(seed) % 9);

	for (size_t k = 0; k < want; k++) {
		const char *p = pieces[rand_r(seed) %
		                       (sizeof pieces / sizeof pieces[0])];
		size_t len = strlen(p);
		if (n + len >= cap)
			break;
		memcpy(out + n, p, len);
		n += len;
	}
	out[n] = 0;
	return n;
}

/* The result of a one-row statement as comparable text: its type and
 * bytes, or the error message. */
static void answer(sqlite3 *db, const char *sql, int nargs,
                   const unsigned char *const *args, const size_t *lens,
                   const int *blob, char *out, size_t cap)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(out, cap, "prepare: %s", sqlite3_errmsg(db));
		return;
	}
	for (int k = 0; k < nargs; k++) {
		if (blob[k])
			sqlite3_bind_blob(st, k + 1, args[k], (int)lens[k],
			                  SQLITE_TRANSIENT);
		else
			sqlite3_bind_text(st, k + 1, (const char *)args[k],
			                  (int)lens[k], SQLITE_TRANSIENT);
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int type = sqlite3_column_type(st, 0);
		const unsigned char *v = sqlite3_column_blob(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		int w = snprintf(out, cap, "%d:%d:", type, n);
		for (int i = 0; i < n && (size_t)w + 3 < cap; i++)
			w += snprintf(out + w, cap - (size_t)w, "%02x", v[i]);
	} else {
		snprintf(out, cap, "error: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
}

/* A new in-memory connection with the replacements on clock c. */
static sqlite3 *open_bounded(struct qsqlfn_clock *c, double timeout_s,
                             const cancel_flag *stop)
{
	sqlite3 *db = NULL;

	CHECK_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100000);
	qsqlfn_clock_start(c, timeout_s, stop);
	CHECK_EQ(qsqlfn_register(db, c), SQLITE_OK);
	return db;
}

static const char *const statements[] = {
	"SELECT ?2 LIKE ?1",
	"SELECT like(?1, ?2)",
	"SELECT ?2 LIKE ?1 ESCAPE ?3",
	"SELECT ?2 GLOB ?1",
	"SELECT instr(?2, ?1)",
	"SELECT replace(?2, ?1, ?3)",
	"SELECT trim(?2, ?1)",
	"SELECT ltrim(?2, ?1)",
	"SELECT rtrim(?2, ?1)",
};

TEST(same_answers_as_sqlite)
{
	sqlite3 *own = NULL, *ours = NULL;
	struct qsqlfn_clock clock;
	unsigned seed = 12345;
	unsigned char a[3][64];
	size_t lens[3];
	int blob[3];
	char want[1024], got[1024];
	int differ = 0;
	long cases = 0;

	CHECK_EQ(sqlite3_open(":memory:", &own), SQLITE_OK);
	ours = open_bounded(&clock, 30, NULL);
	for (int round = 0; round < 20000; round++) {
		const unsigned char *args[3] = {a[0], a[1], a[2]};
		for (int k = 0; k < 3; k++) {
			lens[k] = rand_text(&seed, a[k], sizeof a[k]);
			/* instr and replace compare blobs too */
			blob[k] = rand_r(&seed) % 8 == 0;
		}
		if (rand_r(&seed) % 2) {
			/* an escape of exactly one character, most times */
			lens[2] = rand_text(&seed, a[2], 5);
		}
		for (size_t s = 0; s < sizeof statements / sizeof statements[0];
		     s++) {
			int nargs = strchr(statements[s], '3') ? 3 : 2;
			answer(own, statements[s], nargs, args, lens, blob, want,
			       sizeof want);
			answer(ours, statements[s], nargs, args, lens, blob, got,
			       sizeof got);
			cases++;
			if (strcmp(want, got) && differ++ < 5)
				fprintf(stderr, "  %s [%s|%s|%s]: sqlite %s, ours %s\n",
				        statements[s], a[0], a[1], a[2], want, got);
		}
	}
	CHECK_EQ(differ, 0);
	CHECK_GT(cases, 100000);
	sqlite3_close(own);
	sqlite3_close(ours);
}

/* Long inputs where SQLite's own functions take O(n * m): a needle that
 * almost matches at every position. */
TEST(long_search_is_linear_and_exact)
{
	sqlite3 *db;
	struct qsqlfn_clock clock;
	sqlite3_stmt *st = NULL;
	struct timespec t0, t1;

	db = open_bounded(&clock, 30, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(sqlite3_prepare_v2(db,
	         "WITH h(x) AS (SELECT printf('%.*c', 8000000, 'a')),"
	         " n(y) AS (SELECT printf('%.*c', 1000000, 'a'))"
	         " SELECT instr(x, y || 'b'), instr(x || 'b', y || 'b'),"
	         " length(replace(x, y || 'b', '')), length(replace(x, y, 'c'))"
	         " FROM h, n", -1, &st, NULL), SQLITE_OK);
	CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
	CHECK_EQ(sqlite3_column_int64(st, 0), 0);
	CHECK_EQ(sqlite3_column_int64(st, 1), 8000000 - 1000000 + 1);
	CHECK_EQ(sqlite3_column_int64(st, 2), 8000000);
	CHECK_EQ(sqlite3_column_int64(st, 3), 8);
	sqlite3_finalize(st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* SQLite's naive search needs about 7e12 byte comparisons here;
	 * a functional bound, far above the linear search's time */
	CHECK_LT((double)(t1.tv_sec - t0.tv_sec), 20.0);
	sqlite3_close(db);
}

/* A pattern match that would run for hours ends with "interrupted" once
 * the clock has run out. */
TEST(pattern_ends_at_deadline)
{
	sqlite3 *db;
	struct qsqlfn_clock clock;
	sqlite3_stmt *st = NULL;
	struct timespec t0, t1;
	int rc;

	db = open_bounded(&clock, 0.5, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(sqlite3_prepare_v2(db,
	         "SELECT printf('%.*c', 16000000, 'a') LIKE"
	         " '%' || printf('%.*c', 40000, 'a') || 'b'",
	         -1, &st, NULL), SQLITE_OK);
	rc = sqlite3_step(st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_EQ(rc, SQLITE_INTERRUPT);
	CHECK_EQ(clock.expired, 1);
	CHECK_LT((double)(t1.tv_sec - t0.tv_sec), 10.0);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The stop flag ends a trim over a long character set at once. */
/* Steps a two-argument trim long enough to outlive any clock on db;
 * returns the step's result code. */
static int long_trim(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT trim(printf('%.*c', 2000000, 'a'),"
	                       " printf('%.*c', 2000000, 'b') || 'a')",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc;
}

TEST(stop_flag_ends_trim)
{
	sqlite3 *db;
	struct qsqlfn_clock clock;
	cancel_flag stop = 1;

	db = open_bounded(&clock, 30, &stop);
	CHECK_EQ(long_trim(db), SQLITE_INTERRUPT);
	CHECK_EQ(clock.expired, 2);
	sqlite3_close(db);
}

/* A paused clock does not run out: the time a streamed answer waits for
 * its reader is not the statement's; resumed, it counts again. */
TEST(paused_clock_keeps_its_time)
{
	struct qsqlfn_clock clock;
	struct timespec nap = {0, 300000000L};

	qsqlfn_clock_start(&clock, 0.2, NULL);
	qsqlfn_clock_pause(&clock);
	nanosleep(&nap, NULL);
	qsqlfn_clock_resume(&clock);
	CHECK_EQ(qsqlfn_clock_expired(&clock), 0);
	nanosleep(&nap, NULL);
	CHECK_EQ(qsqlfn_clock_expired(&clock), 1);
	CHECK_EQ(clock.expired, 1);
}

/* The cancel flag (the one asker went away) ends a statement as stop does,
 * remembered as 3. */
TEST(cancel_flag_ends_trim)
{
	sqlite3 *db;
	struct qsqlfn_clock clock;
	cancel_flag cancel = 1;

	db = open_bounded(&clock, 30, NULL);
	clock.cancel = &cancel;
	CHECK_EQ(long_trim(db), SQLITE_INTERRUPT);
	CHECK_EQ(clock.expired, 3);
	sqlite3_close(db);
}

int main(void)
{
	RUN(same_answers_as_sqlite);
	RUN(long_search_is_linear_and_exact);
	RUN(pattern_ends_at_deadline);
	RUN(stop_flag_ends_trim);
	RUN(paused_clock_keeps_its_time);
	RUN(cancel_flag_ends_trim);
	return testlib_done();
}
