/* utf8: validation and repair of UTF-8 text (see utf8.h). */
#include "base/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

int utf8_valid(const char *s, size_t n)
{
	size_t k = 0;

	/* ASCII, most text, a word at a time; u8_check from the first byte
	 * that is not (a character boundary) */
	for (uint64_t w; k + 8 <= n; k += 8) {
		memcpy(&w, s + k, 8);
		if (w & 0x8080808080808080u)
			break;
	}
	while (k < n && !((unsigned char)s[k] & 0x80))
		k++;
	return k == n || u8_check((const uint8_t *)s + k, n - k) == NULL;
}

const char *utf8_problem(const char *s, size_t n)
{
	const uint8_t *bad = u8_check((const uint8_t *)s, n);
	if (!bad)
		return NULL;
	size_t left = n - (size_t)(bad - (const uint8_t *)s);
	uint8_t c = bad[0], d = left > 1 ? bad[1] : 0;
	int cont = (d & 0xC0) == 0x80;

	if ((c & 0xC0) == 0x80)
		return "a stray continuation byte";
	if (c == 0xC0 || c == 0xC1 || (c == 0xE0 && cont && d < 0xA0) ||
	    (c == 0xF0 && cont && d < 0x90))
		return "an overlong form";
	if (c == 0xED && cont && d >= 0xA0)
		return "an encoded surrogate";
	if ((c == 0xF4 && cont && d >= 0x90) || (c >= 0xF5 && c <= 0xF7))
		return "a code point above U+10FFFF";
	if (c >= 0xF8)
		return "a byte that is never UTF-8";
	return "a truncated character";
}

size_t utf8_lead_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

unsigned long utf8_decode(const unsigned char *p, size_t n)
{
	unsigned long cp = n == 1 ? p[0] : n == 2 ? (p[0] & 0x1Fu)
	                 : n == 3 ? (p[0] & 0x0Fu) : (p[0] & 0x07u);
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3Fu);
	return cp;
}

/* The length of the maximal subpart at s (invalid there): a lead byte and
 * the continuation bytes that could still have completed it, at least 1. */
static size_t subpart(const unsigned char *s, size_t n)
{
	size_t need = utf8_lead_len(s[0]), k = 1;
	unsigned char lo = 0x80, hi = 0xBF;

	if (need < 2)
		return 1;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	while (k < need && k < n && s[k] >= lo && s[k] <= hi) {
		k++;
		lo = 0x80, hi = 0xBF;
	}
	return k;
}

size_t utf8_cut(const char *s, size_t n, size_t cap)
{
	size_t k, start;

	if (n <= cap)
		return n;
	/* back up over at most 3 continuation bytes to a lead byte */
	k = cap;
	start = k;
	while (start > 0 && k - start < 3 && ((unsigned char)s[start] & 0xC0) == 0x80)
		start--;
	if (((unsigned char)s[start] & 0xC0) == 0x80)
		return k; /* not a character being cut: stray bytes */
	size_t need = utf8_lead_len((unsigned char)s[start]);
	if (need > 1 && start + need > cap)
		return start; /* the character at start does not fit */
	return k;
}

size_t utf8_tail(const char *s, size_t n, size_t cap)
{
	size_t k = n > cap ? n - cap : 0;
	for (int i = 0; i < 3 && k < n && ((unsigned char)s[k] & 0xC0) == 0x80; i++)
		k++;
	return k;
}

void utf8_trim_tail(char *s)
{
	size_t n = strlen(s), j = n;

	while (j > 0 && n - j < 3 && ((unsigned char)s[j - 1] & 0xC0) == 0x80)
		j--;
	if (j == 0)
		return;
	size_t need = utf8_lead_len((unsigned char)s[j - 1]);
	if (need > 1 && j - 1 + need > n)
		s[j - 1] = '\0';
}

void utf8_fix(char *s, size_t cap)
{
	size_t n = strlen(s);

	if (utf8_valid(s, n))
		return;
	utf8_trim_tail(s);
	n = strlen(s);
	if (utf8_valid(s, n))
		return;
	/* each invalid subpart becomes U+FFFD, whole characters while they fit
	 * (the repaired text is valid, so this is a cut on a boundary) */
	char *fixed = malloc(cap);
	if (!fixed) {
		/* no memory: drop the bytes that are not ASCII */
		size_t o = 0;
		for (size_t i = 0; i < n; i++)
			if (!((unsigned char)s[i] & 0x80))
				s[o++] = s[i];
		s[o] = '\0';
		return;
	}
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		int bad;
		size_t k = utf8_next(s + i, n - i, &bad);
		const char *piece = bad ? "\xEF\xBF\xBD" : s + i;
		size_t len = bad ? 3 : k;
		if (o + len > cap - 1)
			break;
		memcpy(fixed + o, piece, len);
		o += len;
		i += k;
	}
	memcpy(s, fixed, o);
	s[o] = '\0';
	free(fixed);
}

size_t utf8_next(const char *s, size_t n, int *bad)
{
	ucs4_t uc;
	int k = u8_mbtoucr(&uc, (const uint8_t *)s, n);

	*bad = k < 0;
	/* one U+FFFD per maximal subpart (Unicode 3.9, "U+FFFD substitution
	 * of maximal subparts") */
	return k < 0 ? subpart((const unsigned char *)s, n) : (size_t)k;
}
