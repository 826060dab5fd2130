/*
 * text: case-insensitive matching with full Unicode lowercase mapping
 * (libunistring), as every query filter that says "case-insensitive" uses.
 */
#ifndef DSIGHT_TEXT_H
#define DSIGHT_TEXT_H

#include <stddef.h>

/* Lowercases s (n bytes of UTF-8) with the full Unicode mapping.  Returns a
 * new NUL-terminated string (caller frees) and its length in *outlen; for
 * invalid UTF-8 the bytes are copied unchanged.  NULL only when out of
 * memory. */
char *text_lower(const char *s, size_t n, size_t *outlen);

/* True when needle_lower (already lowercased by text_lower) is a substring
 * of the lowercased hay. */
int text_contains(const char *hay, size_t hay_len, const char *needle_lower,
                  size_t needle_len);

#endif
