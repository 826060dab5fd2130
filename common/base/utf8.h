/*
 * utf8: validation and repair of UTF-8 text.
 *
 * Owns the one definition of "valid text" used across dsight: RFC 3629
 * UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF,
 * no stray bytes); NUL is an ordinary character.  Also decoding one
 * character, cutting text on a character boundary (fixed-size message
 * buffers) and the unit of repair, one character or one invalid subpart
 * (buf_append_utf8 replaces each with U+FFFD: text from Nsight exports).  See
 * doc/evidence-document.md, "Text".
 */
#ifndef DSIGHT_UTF8_H
#define DSIGHT_UTF8_H

#include <stddef.h>

/* Length of the sequence a lead byte announces: 1 for ASCII, 2 to 4, 0
 * for a byte that cannot start a character. */
size_t utf8_lead_len(unsigned char c);
/* The code point of one valid character of n = utf8_lead_len(p[0]) bytes. */
unsigned long utf8_decode(const unsigned char *p, size_t n);

/* 1 when s (n bytes) is valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t n);

/* What is wrong with the first invalid sequence of s (n bytes), as a
 * phrase for messages ("an overlong form", "an encoded surrogate", "a code
 * point above U+10FFFF", "a stray continuation byte", "a truncated
 * character", "a byte that is never UTF-8"); NULL when s is valid. */
const char *utf8_problem(const char *s, size_t n);

/* The length of the longest prefix of s (n bytes) that is at most cap bytes
 * and does not end inside a multibyte character. */
size_t utf8_cut(const char *s, size_t n, size_t cap);

/* The offset where the longest suffix of s (n bytes) of at most cap bytes
 * starting on a character boundary begins. */
size_t utf8_tail(const char *s, size_t n, size_t cap);

/* Removes, in place, an incomplete multibyte character at the end of the
 * NUL-terminated string s (what a byte-counted truncation leaves). */
void utf8_trim_tail(char *s);

/* The length of the first character of s (n > 0 bytes), *bad = 0; or, when
 * s starts with an invalid sequence, *bad = 1 and the length of its maximal
 * subpart (Unicode 3.9), the bytes one U+FFFD replaces. */
size_t utf8_next(const char *s, size_t n, int *bad);

/* Makes the NUL-terminated string s (in a buffer of cap bytes) valid UTF-8
 * in place: an incomplete character at the end is dropped, other invalid
 * bytes become U+FFFD while they fit. */
void utf8_fix(char *s, size_t cap);

#endif
