/* jsonout: the one JSON emitter (see jsonout.h). */
#include "base/jsonout.h"
#include "base/dtoa.h"
#include "base/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

int jsonout_format_real(char out[JSONOUT_REAL_MAX], double v)
{
	char d[17];
	int n, decpt, x, k = 0;

	if (!isfinite(v))
		return -1;
	if (signbit(v)) {
		out[k++] = '-';
		v = -v;
	}
	if (v == 0) {
		memcpy(out + k, "0.0", 4);
		return k + 3;
	}
	n = dtoa_shortest(v, d, &decpt);
	x = decpt - 1; /* scientific exponent */
	if (x >= -4 && x <= 15) {
		if (decpt <= 0) {
			out[k++] = '0';
			out[k++] = '.';
			for (int z = 0; z < -decpt; z++)
				out[k++] = '0';
			memcpy(out + k, d, (size_t)n);
			k += n;
		} else if (n <= decpt) {
			memcpy(out + k, d, (size_t)n);
			k += n;
			for (int z = n; z < decpt; z++)
				out[k++] = '0';
			out[k++] = '.';
			out[k++] = '0';
		} else {
			memcpy(out + k, d, (size_t)decpt);
			k += decpt;
			out[k++] = '.';
			memcpy(out + k, d + decpt, (size_t)(n - decpt));
			k += n - decpt;
		}
	} else {
		out[k++] = d[0];
		if (n > 1) {
			out[k++] = '.';
			memcpy(out + k, d + 1, (size_t)(n - 1));
			k += n - 1;
		}
		out[k++] = 'e';
		out[k++] = x < 0 ? '-' : '+';
		if (x < 0)
			x = -x;
		if (x >= 100)
			out[k++] = (char)('0' + x / 100);
		out[k++] = (char)('0' + x / 10 % 10);
		out[k++] = (char)('0' + x % 10);
	}
	out[k] = '\0';
	return k;
}

void jsonout_real(struct buf *b, double v)
{
	char tmp[JSONOUT_REAL_MAX];
	int n = jsonout_format_real(tmp, v);
	if (n < 0) {
		if (!b->failed)
			b->failed = ERR_DATA;
		return;
	}
	buf_append(b, tmp, (size_t)n);
}

/* Writes the n decimal digits of u ending at end, two at a time. */
static inline __attribute__((always_inline)) void put_digits(char *end, uint64_t u)
{
	for (; u >= 100; u /= 100)
		end -= 2, memcpy(end, dtoa_pairs + 2 * (u % 100), 2);
	if (u >= 10)
		memcpy(end - 2, dtoa_pairs + 2 * u, 2);
	else
		end[-1] = (char)('0' + u);
}

/* The builds print tens of millions of integers: the digits go straight
 * into the buffer when it has room (a copy through a scratch array, a
 * memcpy call for a few bytes, showed in the profiles). */
void jsonout_int(struct buf *b, int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t len = (size_t)dtoa_ndigits(u) + (v < 0);

	if (!b->failed && len < b->cap - b->len && (!b->max || len <= b->max - b->len)) {
		char *at = b->data + b->len;
		if (v < 0)
			*at = '-';
		put_digits(at + len, u);
		b->len += len;
		b->data[b->len] = '\0';
		return;
	}
	char tmp[24];
	if (v < 0)
		tmp[0] = '-';
	put_digits(tmp + len, u);
	buf_append(b, tmp, len);
}

/* Whether one of the 8 bytes of w is below 0x20, '"' or '\\' (the bytes
 * a JSON string escapes): the "has a byte less than" and "has a zero
 * byte" tests, exact for the word as a whole. */
static int word_escapes(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');

	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
	        ((bs - ones) & ~bs)) & high ? 1 : 0;
}

void jsonout_str(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0, k = 0;

	if (buf_reserve(b, n + 2))
		return;
	buf_putc(b, '"');
	for (;;) {
		/* the plain text, most of it, a word at a time */
		for (uint64_t w; k + 8 <= n; k += 8) {
			memcpy(&w, s + k, 8);
			if (word_escapes(w))
				break;
		}
		if (k >= n)
			break;
		unsigned char c = (unsigned char)s[k];
		if (c >= 0x20 && c != '"' && c != '\\') {
			k++;
			continue;
		}
		buf_append(b, s + run, k - run);
		run = ++k;
		switch (c) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		case '\b': buf_append(b, "\\b", 2); break;
		case '\f': buf_append(b, "\\f", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			buf_append(b, u, 6);
		}
		}
	}
	buf_append(b, s + run, n - run);
	buf_putc(b, '"');
}

void jsonout_cstr(struct buf *b, const char *s)
{
	jsonout_str(b, s, strlen(s));
}

static void newline(struct buf *b, int depth)
{
	buf_putc(b, '\n');
	for (int k = 0; k < depth; k++)
		buf_append(b, "  ", 2);
}

static void tree(struct buf *b, const json_t *j, int pretty, int depth)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;
		int first = 1;
		if (json_object_size(j) == 0) {
			buf_append(b, "{}", 2);
			break;
		}
		buf_putc(b, '{');
		json_object_foreach((json_t *)j, key, v) {
			if (!first)
				buf_putc(b, ',');
			first = 0;
			if (pretty)
				newline(b, depth + 1);
			jsonout_cstr(b, key);
			buf_append(b, pretty ? ": " : ":", pretty ? 2 : 1);
			tree(b, v, pretty, depth + 1);
		}
		if (pretty)
			newline(b, depth);
		buf_putc(b, '}');
		break;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(j);
		if (n == 0) {
			buf_append(b, "[]", 2);
			break;
		}
		buf_putc(b, '[');
		for (size_t k = 0; k < n; k++) {
			if (k)
				buf_putc(b, ',');
			if (pretty)
				newline(b, depth + 1);
			tree(b, json_array_get(j, k), pretty, depth + 1);
		}
		if (pretty)
			newline(b, depth);
		buf_putc(b, ']');
		break;
	}
	case JSON_STRING:
		jsonout_str(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		jsonout_int(b, (int64_t)json_integer_value(j));
		break;
	case JSON_REAL:
		jsonout_real(b, json_real_value(j));
		break;
	case JSON_TRUE:
		buf_append(b, "true", 4);
		break;
	case JSON_FALSE:
		buf_append(b, "false", 5);
		break;
	default:
		buf_append(b, "null", 4);
	}
}

void jsonout_tree(struct buf *b, const json_t *j, int pretty)
{
	tree(b, j, pretty, 0);
}

/* ---- pretty re-emission of JSON text through yajl ---- */

struct pretty {
	struct buf *b;
	int depth;
	int first;   /* nothing emitted yet in the current container */
	int after_key;
};

static void pretty_value_prefix(struct pretty *p)
{
	if (p->after_key) {
		p->after_key = 0;
		return;
	}
	if (p->depth > 0) {
		if (!p->first)
			buf_putc(p->b, ',');
		newline(p->b, p->depth);
	}
	p->first = 0;
}

static int pretty_scalar(struct pretty *p, const char *s, size_t n)
{
	pretty_value_prefix(p);
	buf_append(p->b, s, n);
	return 1;
}

static int cb_null(void *ctx) { return pretty_scalar(ctx, "null", 4); }
static int cb_bool(void *ctx, int v)
{
	return pretty_scalar(ctx, v ? "true" : "false", v ? 4 : 5);
}
static int cb_number(void *ctx, const char *s, size_t n) { return pretty_scalar(ctx, s, n); }
static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct pretty *p = ctx;
	pretty_value_prefix(p);
	jsonout_str(p->b, (const char *)s, n);
	return 1;
}
static int open_container(struct pretty *p, char c)
{
	pretty_value_prefix(p);
	buf_putc(p->b, c);
	p->depth++;
	p->first = 1;
	return 1;
}
static int close_container(struct pretty *p, char c)
{
	p->depth--;
	if (!p->first)
		newline(p->b, p->depth);
	buf_putc(p->b, c);
	p->first = 0;
	return 1;
}
static int cb_start_map(void *ctx) { return open_container(ctx, '{'); }
static int cb_end_map(void *ctx) { return close_container(ctx, '}'); }
static int cb_start_array(void *ctx) { return open_container(ctx, '['); }
static int cb_end_array(void *ctx) { return close_container(ctx, ']'); }
static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
	struct pretty *p = ctx;
	if (!p->first)
		buf_putc(p->b, ',');
	newline(p->b, p->depth);
	p->first = 0;
	jsonout_str(p->b, (const char *)s, n);
	buf_append(p->b, ": ", 2);
	p->after_key = 1;
	return 1;
}

int jsonout_pretty(const char *json, size_t len, struct buf *out)
{
	static const yajl_callbacks cbs = {
		cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
		cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
	};
	struct pretty p = {out, 0, 1, 0};
	yajl_handle h = yajl_alloc(&cbs, NULL, &p);
	int rc = 0;

	if (!h)
		return -1;
	if (yajl_parse(h, (const unsigned char *)json, len) != yajl_status_ok ||
	    yajl_complete_parse(h) != yajl_status_ok)
		rc = -1;
	yajl_free(h);
	return rc;
}
