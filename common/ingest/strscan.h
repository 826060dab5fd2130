/*
 * strscan: a look-ahead over the raw bytes of a JSON text that follows its
 * string tokens only (where each string starts and ends, its decoded
 * length, and its \u escapes).  It exists for what yajl cannot tell the
 * evidence reader: yajl decodes a lone high-surrogate escape ("\ud800") to
 * '?' and pairs "\ud800\u0041" into a wrong character, so the raw escapes
 * are checked here; and yajl re-lexes a string token from its start on
 * every chunk that does not complete it (quadratic in the string's length),
 * so the reader holds back a string that crosses a chunk boundary and gives
 * it to yajl in one piece, with its length capped here.  Everything else
 * (grammar, numbers, UTF-8 bytes) stays yajl's and evparse's job: this is
 * not a JSON parser, outside strings it only looks for '"'.
 */
#ifndef DSIGHT_STRSCAN_H
#define DSIGHT_STRSCAN_H

#include <stddef.h>
#include <stdint.h>

/* The longest string (decoded bytes) an evidence document may hold. */
#define STRSCAN_MAX ((uint64_t)64 << 20)

struct strscan {
	int in_str;         /* inside a string token */
	int esc;            /* 0; 1 after '\'; 2..5: hex digits of \u read */
	unsigned hex;       /* the \u value being read */
	int pend_hi;        /* a high surrogate escape waits for its low half */
	uint64_t len;       /* decoded bytes of the current string so far */
	uint64_t nstr;      /* string tokens opened so far (1-based index) */
	uint64_t lone;      /* index of the first string with a lone surrogate
	                       escape, 0 when none */
	/* results of the last strscan_feed */
	size_t first_close; /* offset just past the quote closing the string
	                       open when the call began (SIZE_MAX: none) */
	size_t last_open;   /* offset of the quote opening the string open when
	                       the call ended (SIZE_MAX: it opened earlier) */
};

enum { STRSCAN_OK = 0, STRSCAN_TOO_LONG = 1 };

void strscan_init(struct strscan *sc);

/* Scans the next n bytes of the text.  Returns STRSCAN_TOO_LONG as soon as
 * the current string exceeds STRSCAN_MAX decoded bytes, else STRSCAN_OK. */
int strscan_feed(struct strscan *sc, const char *s, size_t n);

#endif
