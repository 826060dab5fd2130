/* strscan: string tokens of a raw JSON text, ahead of yajl (see strscan.h). */
#include "ingest/strscan.h"

#include <string.h>

void strscan_init(struct strscan *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->first_close = sc->last_open = SIZE_MAX;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void lone(struct strscan *sc)
{
	if (!sc->lone)
		sc->lone = sc->nstr;
	sc->pend_hi = 0;
}

/* A complete \uXXXX escape of value v. */
static void escape_u(struct strscan *sc, unsigned v)
{
	if (sc->pend_hi) {
		sc->pend_hi = 0;
		if (v >= 0xDC00 && v <= 0xDFFF)
			sc->len += 4;
		else
			lone(sc);
		return;
	}
	if (v >= 0xD800 && v <= 0xDBFF)
		sc->pend_hi = 1;
	else if (v >= 0xDC00 && v <= 0xDFFF)
		lone(sc);
	else
		sc->len += v < 0x80 ? 1 : v < 0x800 ? 2 : 3;
}

int strscan_feed(struct strscan *sc, const char *s, size_t n)
{
	int was_in = sc->in_str;
	size_t k = 0;

	sc->first_close = sc->last_open = SIZE_MAX;
	while (k < n) {
		if (!sc->in_str) {
			const char *q = memchr(s + k, '"', n - k);
			if (!q)
				break;
			k = (size_t)(q - s) + 1;
			sc->in_str = 1;
			sc->nstr++;
			sc->len = 0;
			sc->esc = 0;
			sc->pend_hi = 0;
			sc->last_open = k - 1;
			continue;
		}
		/* inside a string: plain bytes in bulk */
		if (!sc->esc) {
			size_t start = k;
			while (k < n && s[k] != '"' && s[k] != '\\')
				k++;
			if (k > start && sc->pend_hi)
				lone(sc);
			sc->len += k - start;
			if (sc->len > STRSCAN_MAX)
				return STRSCAN_TOO_LONG;
			if (k == n)
				break;
			if (s[k] == '"') {
				if (sc->pend_hi)
					lone(sc);
				sc->in_str = 0;
				k++;
				if (was_in && sc->first_close == SIZE_MAX)
					sc->first_close = k;
				sc->last_open = SIZE_MAX;
				continue;
			}
			sc->esc = 1; /* a backslash */
			k++;
			continue;
		}
		unsigned char c = (unsigned char)s[k++];
		if (sc->esc == 1) {
			if (c == 'u') {
				sc->esc = 2;
				sc->hex = 0;
				continue;
			}
			if (sc->pend_hi)
				lone(sc);
			sc->esc = 0;
			sc->len++;
		} else {
			int h = hexval(c);
			if (h < 0) { /* not JSON: yajl reports it */
				sc->esc = 0;
				continue;
			}
			sc->hex = sc->hex << 4 | (unsigned)h;
			if (++sc->esc == 6) {
				sc->esc = 0;
				escape_u(sc, sc->hex);
			}
		}
		if (sc->len > STRSCAN_MAX)
			return STRSCAN_TOO_LONG;
	}
	return STRSCAN_OK;
}
