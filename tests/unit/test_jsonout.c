/* Unit tests: jsonout (repr reals, strings, trees, pretty) and num. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/dtoa.h"
#include "base/err.h"
#include "base/jsonout.h"
#include "base/num.h"
#include "testlib.h"

static const char *real(double v)
{
	static char out[JSONOUT_REAL_MAX];
	jsonout_format_real(out, v);
	return out;
}

TEST(repr_fixed_and_scientific)
{
	CHECK_STR(real(2.0), "2.0");
	CHECK_STR(real(0.1), "0.1");
	CHECK_STR(real(0.0001), "0.0001");
	CHECK_STR(real(1e-05), "1e-05");
	CHECK_STR(real(123456789012345.0), "123456789012345.0");
	CHECK_STR(real(1e15), "1000000000000000.0");
	CHECK_STR(real(1e16), "1e+16");
	CHECK_STR(real(1.5e16), "1.5e+16");
	CHECK_STR(real(-2.5e-07), "-2.5e-07");
	CHECK_STR(real(1e-09), "1e-09");
	CHECK_STR(real(0.0), "0.0");
	CHECK_STR(real(-0.0), "-0.0");
	CHECK_STR(real(9.100000001), "9.100000001");
	CHECK_STR(real(2.1000000001), "2.1000000001");
	CHECK_STR(real(1e-30), "1e-30");
	CHECK_STR(real(DBL_MAX), "1.7976931348623157e+308");
	CHECK_STR(real(5e-324), "5e-324");
	CHECK_STR(real(0.1 + 0.2), "0.30000000000000004");
	CHECK_STR(real(1e100), "1e+100");
	CHECK_EQ(jsonout_format_real((char[32]){0}, NAN), -1);
}

/* Python's repr of v (finite, non-zero), built without dtoa: the shortest
 * "%.*e" that reads back as v, laid out as repr lays it out (fixed for
 * decimal exponents -4..15, otherwise d.ddde+XX). */
static void repr_reference(double v, char *out, size_t n)
{
	char e[40], digits[24];
	int prec, nd = 0, exp10, decpt;
	const char *p = e;
	size_t k = 0;

	for (prec = 0; prec < 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec, v);
		if (strtod(e, NULL) == v)
			break;
	}
	if (*p == '-')
		out[k++] = *p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp10 = atoi(p + 1);
	if (exp10 < -4 || exp10 >= 16) {
		snprintf(out + k, n - k, "%c%s%se%c%02d", digits[0], nd > 1 ? "." : "",
		         digits + 1, exp10 < 0 ? '-' : '+', abs(exp10));
		return;
	}
	decpt = exp10 + 1; /* digits before the point */
	if (decpt <= 0) {
		k += (size_t)snprintf(out + k, n - k, "0.");
		for (int z = 0; z < -decpt; z++)
			out[k++] = '0';
		snprintf(out + k, n - k, "%s", digits);
	} else if (decpt >= nd) {
		k += (size_t)snprintf(out + k, n - k, "%s", digits);
		for (int z = 0; z < decpt - nd; z++)
			out[k++] = '0';
		snprintf(out + k, n - k, ".0");
	} else {
		snprintf(out + k, n - k, "%.*s.%s", decpt, digits, digits + decpt);
	}
}

/* jsonout_real on random bit patterns (signs, every exponent) prints what
 * Python's repr prints, computed independently above. */
TEST(real_is_python_repr_on_random_doubles)
{
	unsigned long long x = 88172645463325252ULL;
	struct buf b;
	char want[64];
	int bad = 0, tried = 0;

	buf_init(&b, 1 << 20);
	for (int k = 0; k < 20000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v;
		memcpy(&v, &x, sizeof v);
		if (!isfinite(v) || v == 0)
			continue;
		if (k % 2) /* half of them in the fixed-notation range */
			v = ldexp(frexp(v, &(int){0}), (int)(x % 60) - 20);
		b.len = 0;
		jsonout_real(&b, v);
		repr_reference(v, want, sizeof want);
		tried++;
		if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0) {
			if (bad++ < 5)
				fprintf(stderr, "  %a: jsonout %.*s, repr %s\n", v, (int)b.len, b.data, want);
		}
	}
	buf_free(&b);
	CHECK_GT(tried, 15000);
	CHECK_EQ(bad, 0);
}

TEST(strings_raw_utf8)
{
	struct buf b;
	buf_init(&b, 0);
	jsonout_str(&b, "a\"b\\c\n\x01\xc3\x9c", 9);
	CHECK_STR(b.data, "\"a\\\"b\\\\c\\n\\u0001\xc3\x9c\"");
	buf_free(&b);
}

/* What JSON text a byte becomes, from a table: the escaper jsonout_str's
 * word loop must agree with. */
static void escape_slowly(struct buf *b, const unsigned char *s, size_t n)
{
	static char esc[32][8];
	static const char named[][3] = {{'"', '"'}, {'\\', '\\'}, {'\n', 'n'},
	                                {'\r', 'r'}, {'\t', 't'}, {'\b', 'b'}, {'\f', 'f'}};

	for (int c = 0; c < 32; c++)
		snprintf(esc[c], sizeof esc[c], "\\u%04x", c);
	buf_putc(b, '"');
	for (size_t k = 0; k < n; k++) {
		const char *e = s[k] < 32 ? esc[s[k]] : NULL;
		for (size_t m = 0; m < sizeof named / sizeof *named; m++)
			if (s[k] == (unsigned char)named[m][0]) {
				buf_putc(b, '\\');
				buf_putc(b, named[m][1]);
				e = "";
			}
		if (!e)
			buf_putc(b, (char)s[k]);
		else
			buf_append(b, e, strlen(e));
	}
	buf_putc(b, '"');
}

TEST(strings_escaped_at_every_offset)
{
	/* each byte that needs an escape, and its neighbours that do not
	 * (0x1f/0x20, '!'/'#', '['/']', 0x7f, 0x80, 0xff), at every offset of
	 * strings of every length up to 40, in runs and alone */
	static const unsigned char special[] = {0, 1, '\n', 0x1f, 0x20, '"', '!', '#',
	                                        '\\', '[', ']', 0x7f, 0x80, 0xff, 'a'};
	unsigned char s[40];
	struct buf fast, slow;
	unsigned x = 99;
	long wrong = 0;

	buf_init(&fast, 0);
	buf_init(&slow, 0);
	for (size_t n = 0; n <= sizeof s; n++)
		for (size_t at = 0; at < n; at++)
			for (size_t c = 0; c < sizeof special; c++) {
				for (size_t k = 0; k < n; k++) {
					x = x * 1103515245u + 12345u;
					s[k] = (x >> 16) % 5 == 0 ? special[(x >> 20) % sizeof special] : 'q';
				}
				s[at] = special[c];
				fast.len = slow.len = 0;
				jsonout_str(&fast, (const char *)s, n);
				escape_slowly(&slow, s, n);
				wrong += fast.len != slow.len || memcmp(fast.data, slow.data, fast.len);
			}
	CHECK_EQ(wrong, 0);
	buf_free(&fast);
	buf_free(&slow);
}

TEST(tree_compact_and_pretty)
{
	json_t *j = json_pack("{s:i,s:f,s:[],s:{},s:[s,n,b]}", "a", 1, "b", 2.0,
	                      "c", "d", "e", "x", 1);
	struct buf b;
	buf_init(&b, 0);
	jsonout_tree(&b, j, 0);
	CHECK_STR(b.data, "{\"a\":1,\"b\":2.0,\"c\":[],\"d\":{},\"e\":[\"x\",null,true]}");
	buf_reset(&b);
	jsonout_tree(&b, j, 1);
	CHECK_STR(b.data, "{\n  \"a\": 1,\n  \"b\": 2.0,\n  \"c\": [],\n  \"d\": {},\n"
	                  "  \"e\": [\n    \"x\",\n    null,\n    true\n  ]\n}");
	struct buf p;
	buf_init(&p, 0);
	buf_reset(&b);
	jsonout_tree(&b, j, 0);
	CHECK_EQ(jsonout_pretty(b.data, b.len, &p), 0);
	struct buf q;
	buf_init(&q, 0);
	jsonout_tree(&q, j, 1);
	CHECK_STR(p.data, q.data);
	buf_free(&b), buf_free(&p), buf_free(&q);
	json_decref(j);
}

TEST(pretty_keeps_number_text)
{
	struct buf p;
	buf_init(&p, 0);
	const char *in = "[100000000000000000000,2.0,{\"k\":[]}]";
	CHECK_EQ(jsonout_pretty(in, strlen(in), &p), 0);
	CHECK_STR(p.data, "[\n  100000000000000000000,\n  2.0,\n  {\n    \"k\": []\n  }\n]");
	CHECK_EQ(jsonout_pretty("[1,", 3, &p), -1);
	buf_free(&p);
}

static struct num N(const char *s)
{
	struct num n;
	CHECK_EQ(num_parse(s, strlen(s), &n), 0);
	return n;
}

TEST(num_exact_compare)
{
	struct num a = N("18446744073709551615"), b = N("100000000000000000000");
	struct num c = N("18446744073709551616.0"), d = N("3"), e = N("3.0");
	struct num f = N("9007199254740993"), g = N("9007199254740992.0");
	CHECK(a.kind == NUM_BIG && d.kind == NUM_INT && e.kind == NUM_REAL);
	CHECK_LT(num_cmp(&a, &b), 0);
	CHECK_LT(num_cmp(&a, &c), 0);
	CHECK_GT(num_cmp(&c, &a), 0);
	CHECK_EQ(num_cmp(&d, &e), 0);
	CHECK_GT(num_cmp(&f, &g), 0); /* 2^53+1 > 2^53 exactly */
	struct num h = N("-100000000000000000000"), i = N("-1e300");
	CHECK_GT(num_cmp(&h, &i), 0);
	CHECK_LT(num_cmp(&h, &d), 0);
	struct buf bb;
	buf_init(&bb, 0);
	num_emit(&bb, &b);
	buf_putc(&bb, ',');
	num_emit(&bb, &e);
	CHECK_STR(bb.data, "100000000000000000000,3.0");
	buf_free(&bb);
	struct num bad;
	CHECK_EQ(num_parse("1e999", 5, &bad), -1);
}

/* Integers: every digit count, both signs, the extremes, random values,
 * and a buffer too small (the slow path) or at its max; each against
 * printf. */
TEST(int_matches_printf)
{
	int64_t v[200];
	size_t n = 0, bad = 0;
	uint64_t x = 88172645463325252ULL;

	v[n++] = 0;
	v[n++] = INT64_MAX;
	v[n++] = INT64_MIN;
	for (int64_t p = 1; n < 60 && p <= INT64_MAX / 10; p *= 10) {
		v[n++] = p;
		v[n++] = p - 1;
		v[n++] = -p;
	}
	while (n < 200) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[n++] = (int64_t)(x >> (x & 63));
	}
	for (size_t i = 0; i < n; i++) {
		char want[32];
		struct buf b, small;
		snprintf(want, sizeof want, "%" PRId64, v[i]);
		buf_init(&b, 0);
		buf_puts(&b, "[");
		jsonout_int(&b, v[i]);
		buf_init(&small, 0); /* no storage yet: the slow path */
		jsonout_int(&small, v[i]);
		if (strcmp(b.data + 1, want) || strcmp(small.data, want)) {
			if (!bad++)
				fprintf(stderr, "  %s: %s, %s\n", want, b.data + 1, small.data);
		}
		buf_free(&b);
		buf_free(&small);
	}
	CHECK_EQ(bad, 0);
	struct buf m;
	buf_init(&m, 3); /* a max: "-12" fits, a fourth byte does not */
	jsonout_int(&m, -12);
	CHECK_STR(m.data, "-12");
	jsonout_int(&m, 5);
	CHECK_EQ(m.failed, ERR_LIMIT);
	buf_free(&m);
}

int main(void)
{
	RUN(repr_fixed_and_scientific);
	RUN(real_is_python_repr_on_random_doubles);
	RUN(strings_raw_utf8);
	RUN(strings_escaped_at_every_offset);
	RUN(tree_compact_and_pretty);
	RUN(pretty_keeps_number_text);
	RUN(num_exact_compare);
	RUN(int_matches_printf);
	return testlib_done();
}
