/* qsqlfn: bounded replacements for SQLite's slow functions (see qsqlfn.h). */
#include "query/qsqlfn.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The clock is read once every TICK_CHECK operations of a replacement. */
#define TICK_CHECK 1024u

void qsqlfn_clock_start(struct qsqlfn_clock *c, double timeout_s,
                        const cancel_flag *stop)
{
	double whole = floor(timeout_s);

	clock_gettime(CLOCK_MONOTONIC, &c->deadline);
	c->deadline.tv_sec += (time_t)whole;
	c->deadline.tv_nsec += (long)((timeout_s - whole) * 1e9);
	if (c->deadline.tv_nsec >= 1000000000L) {
		c->deadline.tv_sec++;
		c->deadline.tv_nsec -= 1000000000L;
	}
	c->stop = stop;
	c->cancel = NULL;
	c->paused.tv_sec = -1;
	c->expired = 0;
	c->ticks = 0;
}

void qsqlfn_clock_pause(struct qsqlfn_clock *c)
{
	if (c->paused.tv_sec < 0)
		clock_gettime(CLOCK_MONOTONIC, &c->paused);
}

void qsqlfn_clock_resume(struct qsqlfn_clock *c)
{
	struct timespec now;

	if (c->paused.tv_sec < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	c->deadline.tv_sec += now.tv_sec - c->paused.tv_sec;
	c->deadline.tv_nsec += now.tv_nsec - c->paused.tv_nsec;
	if (c->deadline.tv_nsec >= 1000000000L) {
		c->deadline.tv_sec++;
		c->deadline.tv_nsec -= 1000000000L;
	} else if (c->deadline.tv_nsec < 0) {
		c->deadline.tv_sec--;
		c->deadline.tv_nsec += 1000000000L;
	}
	c->paused.tv_sec = -1;
}

int qsqlfn_clock_expired(struct qsqlfn_clock *c)
{
	struct timespec now;

	if (c->expired)
		return 1;
	if (c->stop && *c->stop) {
		c->expired = 2;
		return 1;
	}
	if (c->cancel && *c->cancel) {
		c->expired = 3;
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > c->deadline.tv_sec ||
	    (now.tv_sec == c->deadline.tv_sec &&
	     now.tv_nsec >= c->deadline.tv_nsec))
		c->expired = 1;
	return c->expired != 0;
}

/* Counts one operation; 1 when the statement must end. */
static int tick(struct qsqlfn_clock *c)
{
	if (c->expired)
		return 1;
	if (++c->ticks % TICK_CHECK)
		return 0;
	return qsqlfn_clock_expired(c);
}

static void result_expired(sqlite3_context *ctx)
{
	sqlite3_result_error(ctx, "interrupted", -1);
	sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
}

/* ---- UTF-8 as SQLite reads it (lenient: any byte sequence decodes) ---- */

/* The payload bits of a lead byte 0xc0..0xff. */
static const unsigned char lead_bits[64] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
};

static int is_cont(unsigned char b)
{
	return (b & 0xc0) == 0x80;
}

/* Reads one character of a NUL-terminated string and advances *pz: a
 * lead byte takes every continuation byte after it; an overlong form, a
 * surrogate or U+FFFE/U+FFFF reads as U+FFFD; a stray continuation byte
 * reads as itself. */
static uint32_t utf8_next(const unsigned char **pz)
{
	uint32_t c = *(*pz)++;

	if (c >= 0xc0) {
		c = lead_bits[c - 0xc0];
		while (is_cont(**pz))
			c = (c << 6) + (0x3f & *(*pz)++);
		if (c < 0x80 || (c & 0xfffff800u) == 0xd800 ||
		    (c & 0xfffffffeu) == 0xfffe)
			c = 0xfffd;
	}
	return c;
}

/* Steps over one character of a NUL-terminated string. */
static const unsigned char *utf8_skip(const unsigned char *z)
{
	if (*z++ >= 0xc0)
		while (is_cont(*z))
			z++;
	return z;
}

static uint32_t ascii_lower(uint32_t c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static uint32_t ascii_upper(uint32_t c)
{
	return c >= 'a' && c <= 'z' ? c - 32 : c;
}

/* ---- like and glob ---- */

struct pattern_rules {
	uint32_t any;   /* matches any run: '%' or '*' */
	uint32_t one;   /* matches one character: '_' or '?' */
	uint32_t set;   /* opens a class: '[' (glob), 0 (like) */
	int nocase;     /* ASCII letters match either case (like) */
};

struct pattern_fn {
	struct pattern_rules rules;
	struct qsqlfn_clock *clock;
	int blobs_never_match; /* SQLite built with LIKE_DOESNT_MATCH_BLOBS */
};

enum { PM_MATCH, PM_NOMATCH, PM_NO_WILD_MATCH, PM_EXPIRED };

/* Whether string z matches pattern p under r, with `other` the escape
 * character (like) or the class opener (glob).  The same walk as SQLite's
 * so the answers agree: a run wildcard tries each later position of the
 * string for the rest of the pattern, and a failure past a wildcard that
 * cannot match anywhere ends the whole search. */
static int pattern_match(const unsigned char *p, const unsigned char *z,
                         const struct pattern_rules *r, uint32_t other,
                         struct qsqlfn_clock *clk)
{
	const unsigned char *escaped = NULL;
	uint32_t c, c2;

	while ((c = utf8_next(&p)) != 0) {
		if (tick(clk))
			return PM_EXPIRED;
		if (c == r->any) {
			while ((c = utf8_next(&p)) == r->any ||
			       (c == r->one && r->one != 0)) {
				if (c == r->one && utf8_next(&z) == 0)
					return PM_NO_WILD_MATCH;
			}
			if (c == 0)
				return PM_MATCH;
			if (c == other) {
				if (r->set == 0) {
					c = utf8_next(&p);
					if (c == 0)
						return PM_NO_WILD_MATCH;
				} else {
					/* a class right after the run */
					while (*z) {
						int m = pattern_match(p - 1, z, r,
						                      other, clk);
						if (m != PM_NOMATCH)
							return m;
						z = utf8_skip(z);
					}
					return PM_NO_WILD_MATCH;
				}
			}
			if (c < 0x80) {
				char stop[3] = {(char)c, 0, 0};
				if (r->nocase) {
					stop[0] = (char)ascii_upper(c);
					stop[1] = (char)ascii_lower(c);
				}
				for (;;) {
					int m;
					z += strcspn((const char *)z, stop);
					if (!*z)
						break;
					z++;
					if (tick(clk))
						return PM_EXPIRED;
					m = pattern_match(p, z, r, other, clk);
					if (m != PM_NOMATCH)
						return m;
				}
			} else {
				while ((c2 = utf8_next(&z)) != 0) {
					int m;
					if (c2 != c)
						continue;
					if (tick(clk))
						return PM_EXPIRED;
					m = pattern_match(p, z, r, other, clk);
					if (m != PM_NOMATCH)
						return m;
				}
			}
			return PM_NO_WILD_MATCH;
		}
		if (c == other) {
			if (r->set == 0) {
				c = utf8_next(&p);
				if (c == 0)
					return PM_NOMATCH;
				escaped = p;
			} else {
				uint32_t prior = 0;
				int seen = 0, invert = 0;
				c = utf8_next(&z);
				if (c == 0)
					return PM_NOMATCH;
				c2 = utf8_next(&p);
				if (c2 == '^') {
					invert = 1;
					c2 = utf8_next(&p);
				}
				if (c2 == ']') {
					if (c == ']')
						seen = 1;
					c2 = utf8_next(&p);
				}
				while (c2 && c2 != ']') {
					if (c2 == '-' && p[0] != ']' && p[0] != 0 &&
					    prior > 0) {
						c2 = utf8_next(&p);
						if (c >= prior && c <= c2)
							seen = 1;
						prior = 0;
					} else {
						if (c == c2)
							seen = 1;
						prior = c2;
					}
					c2 = utf8_next(&p);
				}
				if (c2 == 0 || (seen ^ invert) == 0)
					return PM_NOMATCH;
				continue;
			}
		}
		c2 = utf8_next(&z);
		if (c == c2)
			continue;
		if (r->nocase && c < 0x80 && c2 < 0x80 &&
		    ascii_lower(c) == ascii_lower(c2))
			continue;
		if (c == r->one && p != escaped && c2 != 0)
			continue;
		return PM_NOMATCH;
	}
	return *z == 0 ? PM_MATCH : PM_NOMATCH;
}

static size_t utf8_count(const unsigned char *z)
{
	size_t n = 0;
	while (*z) {
		z = utf8_skip(z);
		n++;
	}
	return n;
}

/* like(pattern, string [, escape]) and glob(pattern, string). */
static void fn_like(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct pattern_fn *f = sqlite3_user_data(ctx);
	struct pattern_rules r = f->rules;
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	const unsigned char *pat, *str;
	uint32_t other;
	int m;

	if (f->blobs_never_match && (sqlite3_value_type(argv[0]) == SQLITE_BLOB ||
	                             sqlite3_value_type(argv[1]) == SQLITE_BLOB)) {
		sqlite3_result_int(ctx, 0);
		return;
	}
	if (sqlite3_value_bytes(argv[0]) >
	    sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, -1)) {
		sqlite3_result_error(ctx, "LIKE or GLOB pattern too complex", -1);
		return;
	}
	if (argc == 3) {
		const unsigned char *esc = sqlite3_value_text(argv[2]);
		if (!esc)
			return;
		if (utf8_count(esc) != 1) {
			sqlite3_result_error(ctx, "ESCAPE expression must be a "
			                     "single character", -1);
			return;
		}
		other = utf8_next(&esc);
		if (other == r.any)
			r.any = 0;
		if (other == r.one)
			r.one = 0;
	} else {
		other = r.set;
	}
	pat = sqlite3_value_text(argv[0]);
	str = sqlite3_value_text(argv[1]);
	if (!pat || !str)
		return;
	m = pattern_match(pat, str, &r, other, f->clock);
	if (m == PM_EXPIRED)
		result_expired(ctx);
	else
		sqlite3_result_int(ctx, m == PM_MATCH);
}

/* ---- instr and replace: linear searches ---- */

/* instr(haystack, needle): the 1-based position of the first occurrence
 * (characters for text, bytes for two blobs), 0 when there is none. */
static void fn_instr(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	int th = sqlite3_value_type(argv[0]), tn = sqlite3_value_type(argv[1]);
	sqlite3_value *dup_h = NULL, *dup_n = NULL;
	const unsigned char *h, *n;
	int nh, nn, text = 1;
	int64_t pos = 1;

	(void)argc;
	if (th == SQLITE_NULL || tn == SQLITE_NULL)
		return;
	nh = sqlite3_value_bytes(argv[0]);
	nn = sqlite3_value_bytes(argv[1]);
	if (nn > 0) {
		const unsigned char *at;
		if (th == SQLITE_BLOB && tn == SQLITE_BLOB) {
			n = sqlite3_value_blob(argv[1]);
			h = sqlite3_value_blob(argv[0]);
			text = 0;
		} else if (th != SQLITE_BLOB && tn != SQLITE_BLOB) {
			h = sqlite3_value_text(argv[0]);
			n = sqlite3_value_text(argv[1]);
		} else {
			dup_h = sqlite3_value_dup(argv[0]);
			h = sqlite3_value_text(dup_h);
			if (!h)
				goto done;
			nh = sqlite3_value_bytes(dup_h);
			dup_n = sqlite3_value_dup(argv[1]);
			n = sqlite3_value_text(dup_n);
			if (!n)
				goto done;
			nn = sqlite3_value_bytes(dup_n);
		}
		if (!n || (nh && !h)) {
			sqlite3_result_error_nomem(ctx);
			goto done;
		}
		if (text && is_cont(n[0])) {
			/* moving by characters, a match can start only at
			 * the first byte */
			pos = nn <= nh && !memcmp(h, n, (size_t)nn) ? 1 : 0;
		} else {
			at = nn <= nh ? memmem(h, (size_t)nh, n, (size_t)nn) : NULL;
			if (!at)
				pos = 0;
			else if (!text)
				pos = at - h + 1;
			else
				for (const unsigned char *q = h + 1; q <= at; q++)
					pos += !is_cont(*q);
		}
	}
	sqlite3_result_int64(ctx, pos);
done:
	sqlite3_value_free(dup_h);
	sqlite3_value_free(dup_n);
}

/* replace(string, pattern, replacement): every non-overlapping byte
 * match of pattern, left to right, replaced; the string itself when the
 * pattern is empty (or starts with NUL). */
static void fn_replace(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	const unsigned char *s, *pat, *rep;
	size_t ns, np, nr;
	int64_t limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
	sqlite3_str *out;

	(void)argc;
	if (!(s = sqlite3_value_text(argv[0])))
		return;
	ns = (size_t)sqlite3_value_bytes(argv[0]);
	if (!(pat = sqlite3_value_text(argv[1])))
		return;
	if (!pat[0]) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	np = (size_t)sqlite3_value_bytes(argv[1]);
	if (!(rep = sqlite3_value_text(argv[2])))
		return;
	nr = (size_t)sqlite3_value_bytes(argv[2]);
	out = sqlite3_str_new(db);
	for (size_t i = 0; i < ns;) {
		const unsigned char *at =
		        np <= ns - i ? memmem(s + i, ns - i, pat, np) : NULL;
		size_t keep = at ? (size_t)(at - (s + i)) : ns - i;
		sqlite3_str_append(out, (const char *)s + i, (int)keep);
		i += keep;
		if (!at)
			break;
		sqlite3_str_append(out, (const char *)rep, (int)nr);
		i += np;
		if (sqlite3_str_length(out) > limit)
			break;
	}
	if (sqlite3_str_errcode(out) == SQLITE_NOMEM) {
		sqlite3_free(sqlite3_str_finish(out));
		sqlite3_result_error_nomem(ctx);
	} else if (sqlite3_str_length(out) > limit ||
	           sqlite3_str_errcode(out) == SQLITE_TOOBIG) {
		sqlite3_free(sqlite3_str_finish(out));
		sqlite3_result_error_toobig(ctx);
	} else {
		int len = sqlite3_str_length(out);
		char *t = sqlite3_str_finish(out);
		if (!t && len == 0)
			sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
		else if (!t)
			sqlite3_result_error_nomem(ctx);
		else
			sqlite3_result_text(ctx, t, len, sqlite3_free);
	}
}

/* ---- trim, ltrim, rtrim with a character set ---- */

struct trim_fn {
	int sides; /* 1: left, 2: right, 3: both */
	struct qsqlfn_clock *clock;
};

/* The length of the set character that s[0..n) starts (left) or ends
 * (right) with, 0 when none does.  A set character is a lead byte and
 * its continuation bytes, its length kept in one byte as SQLite does. */
static size_t trim_hit(const unsigned char *s, size_t n, int right,
                       const unsigned char *set, struct qsqlfn_clock *clk,
                       int *expired)
{
	for (const unsigned char *z = set; *z;) {
		const unsigned char *next = utf8_skip(z);
		size_t len = (unsigned char)(next - z);
		if (tick(clk)) {
			*expired = 1;
			return 0;
		}
		if (len <= n && !memcmp(right ? s + n - len : s, z, len))
			return len;
		z = next;
	}
	return 0;
}

static void fn_trim(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct trim_fn *f = sqlite3_user_data(ctx);
	const unsigned char *in, *set;
	size_t n, len;
	int expired = 0;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (!(in = sqlite3_value_text(argv[0])))
		return;
	n = (size_t)sqlite3_value_bytes(argv[0]);
	if (!(set = sqlite3_value_text(argv[1])))
		return;
	if (*set) {
		if (f->sides & 1)
			while (n > 0 && (len = trim_hit(in, n, 0, set, f->clock,
			                                &expired)) > 0) {
				in += len;
				n -= len;
			}
		if (f->sides & 2)
			while (!expired && n > 0 &&
			       (len = trim_hit(in, n, 1, set, f->clock,
			                       &expired)) > 0)
				n -= len;
	}
	if (expired)
		result_expired(ctx);
	else
		sqlite3_result_text(ctx, (const char *)in, (int)n,
		                    SQLITE_TRANSIENT);
}

/* ---- registration ---- */

static void free_user(void *p)
{
	free(p);
}

int qsqlfn_register(sqlite3 *db, struct qsqlfn_clock *c)
{
	static const struct {
		const char *name;
		struct pattern_rules rules;
		int nargs;
	} patterns[] = {
		{"like", {'%', '_', 0, 1}, 2},
		{"like", {'%', '_', 0, 1}, 3},
		{"glob", {'*', '?', '[', 0}, 2},
	};
	static const struct {
		const char *name;
		int sides;
	} trims[] = {{"ltrim", 1}, {"rtrim", 2}, {"trim", 3}};
	const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	int rc;

	for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
		struct pattern_fn *f = malloc(sizeof *f);
		if (!f)
			return SQLITE_NOMEM;
		f->rules = patterns[k].rules;
		f->clock = c;
		f->blobs_never_match =
		        sqlite3_compileoption_used("LIKE_DOESNT_MATCH_BLOBS");
		rc = sqlite3_create_function_v2(db, patterns[k].name,
		                                patterns[k].nargs, flags, f,
		                                fn_like, NULL, NULL, free_user);
		if (rc != SQLITE_OK)
			return rc;
	}
	for (size_t k = 0; k < sizeof trims / sizeof trims[0]; k++) {
		struct trim_fn *f = malloc(sizeof *f);
		if (!f)
			return SQLITE_NOMEM;
		f->sides = trims[k].sides;
		f->clock = c;
		rc = sqlite3_create_function_v2(db, trims[k].name, 2, flags, f,
		                                fn_trim, NULL, NULL, free_user);
		if (rc != SQLITE_OK)
			return rc;
	}
	rc = sqlite3_create_function_v2(db, "instr", 2, flags, NULL, fn_instr,
	                                NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "replace", 3, flags, NULL,
		                                fn_replace, NULL, NULL, NULL);
	return rc;
}
