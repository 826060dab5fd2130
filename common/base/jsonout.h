/*
 * jsonout: the one JSON emitter of dsight.
 *
 * Reals print in Python repr form (shortest round-trip digits; fixed
 * notation for decimal exponents -4..15 with a fractional part, otherwise
 * d.ddde[+-]XX); integers exactly; strings as raw UTF-8 with only '"', '\\'
 * and control characters escaped.  Compact output uses "," and ":"; pretty
 * output indents by two spaces with ": " (like Python json.dumps(indent=2)).
 * Non-finite reals cannot be written: they set the buffer's sticky failure
 * to ERR_DATA.
 */
#ifndef DSIGHT_JSONOUT_H
#define DSIGHT_JSONOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define JSONOUT_REAL_MAX 32

/* Formats a finite double in repr form into out (NUL-terminated); returns
 * the length, or -1 for NaN/inf. */
int jsonout_format_real(char out[JSONOUT_REAL_MAX], double v);

void jsonout_real(struct buf *b, double v);
void jsonout_int(struct buf *b, int64_t v);
/* Appends s (n bytes, assumed valid UTF-8) as a quoted JSON string. */
void jsonout_str(struct buf *b, const char *s, size_t n);
void jsonout_cstr(struct buf *b, const char *s);

/* Appends a jansson tree.  pretty != 0 indents (starting at depth 0). */
void jsonout_tree(struct buf *b, const json_t *j, int pretty);

/* Re-emits JSON text (e.g. the engine's compact output) pretty-printed,
 * keeping every number's text exactly.  Returns 0 or -1 on invalid input. */
int jsonout_pretty(const char *json, size_t len, struct buf *out);

#endif
