/* Unit tests of common/base/utf8 (valid text, cutting, repair) and of the
 * evidence reader's string look-ahead (common/ingest/strscan). */
#include "testlib.h"

#include <errno.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/utf8.h"
#include "ingest/strscan.h"

#define FFFD "\xef\xbf\xbd"
#define V(lit) utf8_valid(lit, sizeof lit - 1)
#define P(lit) utf8_problem(lit, sizeof lit - 1)

TEST(validity)
{
	CHECK(V("plain ascii"));
	CHECK(V("\xc3\x9c \xe2\x82\xac \xf0\x9f\x98\x80"));
	CHECK(V("a\0b"));                 /* NUL is a character */
	CHECK(V("\xed\x9f\xbf"));         /* U+D7FF */
	CHECK(V("\xee\x80\x80"));         /* U+E000 */
	CHECK(V("\xf4\x8f\xbf\xbf"));     /* U+10FFFF */
	CHECK(!V("\xc0\xaf"));
	CHECK(!V("\xc1\x80"));
	CHECK(!V("\xe0\x80\x80"));
	CHECK(!V("\xf0\x80\x80\x80"));
	CHECK(!V("\xed\xa0\x80"));        /* U+D800 encoded */
	CHECK(!V("\xf4\x90\x80\x80"));    /* U+110000 */
	CHECK(!V("\xf5\x80\x80\x80"));
	CHECK(!V("\x80"));
	CHECK(!V("\xe2\x82"));
	CHECK_STR(P("a\xc0\xaf"), "an overlong form");
	CHECK_STR(P("\xc1\x80"), "an overlong form");
	CHECK_STR(P("\xe0\x80\x80"), "an overlong form");
	CHECK_STR(P("\xf0\x8f\xbf\xbf"), "an overlong form");
	CHECK_STR(P("\xed\xa0\x80"), "an encoded surrogate");
	CHECK_STR(P("\xed\xbf\xbf"), "an encoded surrogate");
	CHECK_STR(P("\xf4\x90\x80\x80"), "a code point above U+10FFFF");
	CHECK_STR(P("\xf7\xbf\xbf\xbf"), "a code point above U+10FFFF");
	CHECK_STR(P("ok\x80"), "a stray continuation byte");
	CHECK_STR(P("\xe2\x82"), "a truncated character");
	CHECK_STR(P("\xe2\x82x"), "a truncated character");
	CHECK_STR(P("\xff"), "a byte that is never UTF-8");
	CHECK(P("\xc3\x9c") == NULL);
}

/* utf8_valid checks ASCII a word at a time: it must agree with u8_check
 * whatever the offset of the first byte above 0x7f. */
TEST(validity_at_every_offset)
{
	static const char *const tails[] = {"\xc3\x9c", "\xc3", "\x80", "\xe2\x82\xac",
	                                    "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f\x98\x80",
	                                    "\xf4\x90\x80\x80", "\xff"};
	static const int valid[] = {1, 0, 0, 1, 0, 0, 1, 0, 0};
	static const size_t afters[] = {0, 1, 2, 7, 8, 9, 17};
	char s[64];
	long wrong = 0;

	for (size_t t = 0; t < sizeof tails / sizeof *tails; t++)
		for (size_t at = 0; at + strlen(tails[t]) + 17 <= sizeof s; at++)
			for (size_t a = 0; a < sizeof afters / sizeof *afters; a++) {
				size_t n = at + strlen(tails[t]) + afters[a];
				memset(s, 'x', sizeof s);
				memcpy(s + at, tails[t], strlen(tails[t]));
				wrong += utf8_valid(s, n) != valid[t];
			}
	CHECK_EQ(wrong, 0);
}

TEST(cutting)
{
	const char *s = "ab\xc3\x9c\xe2\x82\xac\xf0\x9f\x98\x80";
	size_t n = strlen(s);
	CHECK(utf8_cut(s, n, 100) == n);
	CHECK(utf8_cut(s, n, 2) == 2);
	CHECK(utf8_cut(s, n, 3) == 2);   /* inside U+00DC */
	CHECK(utf8_cut(s, n, 4) == 4);
	CHECK(utf8_cut(s, n, 5) == 4);   /* inside U+20AC */
	CHECK(utf8_cut(s, n, 6) == 4);
	CHECK(utf8_cut(s, n, 7) == 7);
	CHECK(utf8_cut(s, n, 10) == 7);  /* inside U+1F600 */
	CHECK(utf8_cut(s, n, 0) == 0);
	CHECK(utf8_tail(s, n, 4) == 7);
	CHECK(utf8_tail(s, n, 5) == 7);
	CHECK(utf8_tail(s, n, 6) == 7);
	CHECK(utf8_tail(s, n, 7) == 4);
	CHECK(utf8_tail(s, n, 100) == 0);

	char t[16];
	strcpy(t, "ab\xc3");
	utf8_trim_tail(t);
	CHECK_STR(t, "ab");
	strcpy(t, "ab\xf0\x9f\x98");
	utf8_trim_tail(t);
	CHECK_STR(t, "ab");
	strcpy(t, "ab\xc3\x9c");
	utf8_trim_tail(t);
	CHECK_STR(t, "ab\xc3\x9c");
}

/* err_set keeps a message valid UTF-8 however it is cut or what it quotes. */
TEST(error_messages)
{
	struct err e;
	char big[3000];
	for (int pre = 0; pre < 3; pre++) {
		memset(big, 'x', (size_t)pre);
		for (size_t k = (size_t)pre; k + 2 < sizeof big; k += 2)
			memcpy(big + k, "\xc3\x9c", 2);
		big[sizeof big - 1 - (sizeof big - 1 - (size_t)pre) % 2] = '\0';
		err_set(&e, ERR_USAGE, "Unknown client request: %s", big);
		CHECK(utf8_valid(e.msg, strlen(e.msg)));
		CHECK(strlen(e.msg) >= ERR_MSG_MAX - 3);
		err_prefix(&e, "%s", big);
		CHECK(utf8_valid(e.msg, strlen(e.msg)));
		errno = ENOENT;
		err_sys(&e, ERR_DATA, "%s", big);
		CHECK(utf8_valid(e.msg, strlen(e.msg)));
	}
	err_set(&e, ERR_DATA, "bad name '%s'", "a\xc0\xaf" "b\xff");
	CHECK_STR(e.msg, "bad name 'a" FFFD FFFD "b" FFFD "'");
}

static const char *repaired(const char *s, size_t n, size_t *bad)
{
	static struct buf b;
	buf_free(&b);
	buf_init(&b, 0);
	*bad = buf_append_utf8(&b, s, n);
	return b.data ? b.data : "";
}

TEST(repair_maximal_subparts)
{
	size_t bad;
	CHECK_STR(repaired("ok", 2, &bad), "ok");
	CHECK(bad == 0);
	/* Unicode's example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 */
	CHECK_STR(repaired("a\xf1\x80\x80\xe1\x80\xc2" "b\x80" "c\x80\xbf" "d", 13, &bad),
	          "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d");
	CHECK(bad == 6);
	CHECK_STR(repaired("\xc0\xaf", 2, &bad), FFFD FFFD);
	CHECK_STR(repaired("\xed\xa0\x80", 3, &bad), FFFD FFFD FFFD);
	CHECK_STR(repaired("step\xe2\x82", 6, &bad), "step" FFFD);
	CHECK(bad == 1);
	struct buf b;
	buf_init(&b, 0);
	buf_append_utf8(&b, "a\0b", 3);
	CHECK(b.len == 3 && memcmp(b.data, "a\0b", 3) == 0);
	buf_free(&b);
}

/* Scans text in pieces of `step` bytes; returns the lone-surrogate index. */
static uint64_t lone_of(const char *text, size_t step)
{
	struct strscan sc;
	size_t n = strlen(text);
	strscan_init(&sc);
	for (size_t k = 0; k < n; k += step)
		strscan_feed(&sc, text + k, n - k < step ? n - k : step);
	return sc.lone;
}

TEST(strscan_surrogates)
{
	for (size_t step = 1; step <= 64; step += 63) {
		CHECK(lone_of("{\"a\":\"x\\ud83d\\ude00y\"}", step) == 0);
		CHECK(lone_of("{\"a\":\"\\ud800\"}", step) == 2);
		CHECK(lone_of("{\"a\":\"\\ud800x\"}", step) == 2);
		CHECK(lone_of("{\"a\":\"\\ud800\\n\"}", step) == 2);
		CHECK(lone_of("{\"a\":\"\\ud800\\u0041\"}", step) == 2);
		CHECK(lone_of("{\"a\":\"\\ud800\\ud800\\udc00\"}", step) == 2);
		CHECK(lone_of("{\"a\":\"\\udc00\"}", step) == 2);
		CHECK(lone_of("{\"a\":[\"ok\",\"\\\\ud800\",\"\\uDBFF\"]}", step) == 4);
		CHECK(lone_of("{\"\\ud800\":1}", step) == 1);
		CHECK(lone_of("{\"a\\\"\":\"\\u0000\\uffff\\\"\\\\\"}", step) == 0);
	}
}

TEST(strscan_boundaries_and_lengths)
{
	struct strscan sc;
	strscan_init(&sc);
	CHECK(strscan_feed(&sc, "{\"ab", 4) == STRSCAN_OK);
	CHECK(sc.in_str && sc.last_open == 1 && sc.len == 2);
	CHECK(strscan_feed(&sc, "c\\u00dc\\ud83d\\ude00\\n\":\"", 24) == STRSCAN_OK);
	/* abc (3) + U+00DC (2) + U+1F600 (4) + \n (1) */
	CHECK(sc.first_close == 22 && sc.in_str && sc.last_open == 23);
	CHECK(sc.nstr == 2);

	/* the cap counts decoded bytes */
	strscan_init(&sc);
	CHECK(strscan_feed(&sc, "\"", 1) == STRSCAN_OK);
	static char chunk[1 << 20];
	memset(chunk, 'x', sizeof chunk);
	int rc = STRSCAN_OK;
	for (int i = 0; i < 64 && rc == STRSCAN_OK; i++)
		rc = strscan_feed(&sc, chunk, sizeof chunk);
	CHECK(rc == STRSCAN_OK && sc.len == STRSCAN_MAX); /* exactly 64 MiB */
	CHECK(strscan_feed(&sc, "x", 1) == STRSCAN_TOO_LONG);
	strscan_init(&sc);
	strscan_feed(&sc, "\"", 1);
	for (size_t k = 0; k + 6 <= sizeof chunk; k += 6)
		memcpy(chunk + k, "\\u0000", 6);
	rc = STRSCAN_OK;
	for (int i = 0; i < 400 && rc == STRSCAN_OK; i++)
		rc = strscan_feed(&sc, chunk, sizeof chunk - sizeof chunk % 6);
	CHECK(rc == STRSCAN_TOO_LONG && sc.len == STRSCAN_MAX + 1);
}

int main(void)
{
	RUN(validity);
	RUN(validity_at_every_offset);
	RUN(cutting);
	RUN(error_messages);
	RUN(repair_maximal_subparts);
	RUN(strscan_surrogates);
	RUN(strscan_boundaries_and_lengths);
	return testlib_done();
}
