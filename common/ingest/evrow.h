/*
 * evrow: one streamed evidence row decoded from its JSON tokens.
 *
 * Owns the row shapes of doc/evidence-document.md (event [start, end, name_index,
 * global_tid, source_row], sample [time, global_tid, stack_index,
 * source_row], point [time, value, source_id, source_row]): which token
 * each field accepts, integer times read as reals, point values kept
 * exactly (big integers as digits).  Also the dictionary-bounds
 * bookkeeping of an index column whose dictionary may come after the rows.
 * No allocation per row: the two text buffers are reused.
 */
#ifndef DSIGHT_EVROW_H
#define DSIGHT_EVROW_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/row.h"
#include "base/num.h"

enum evrow_kind { EVROW_EVENT = 0, EVROW_SAMPLE, EVROW_POINT };

/* Results of feeding a token. */
enum { EVROW_OK = 0, EVROW_SHAPE, EVROW_BIG, EVROW_RANGE, EVROW_NOMEM, EVROW_UTF8 };

struct evrow {
	enum evrow_kind kind;
	int k;          /* fields seen so far (the index of the next one) */
	double t0, t1;
	int64_t i[3];   /* the integer fields, in order */
	struct num value;
	struct buf tid, big;
};

void evrow_init(struct evrow *r);
void evrow_free(struct evrow *r);
/* Starts a new row of the given kind. */
void evrow_begin(struct evrow *r, enum evrow_kind kind);
/* Feed the next token; return EVROW_OK or why it does not fit field r->k. */
int evrow_number(struct evrow *r, const char *s, size_t n);
int evrow_string(struct evrow *r, const char *s, size_t n);
int evrow_null(struct evrow *r);
/* 1 when every field has been seen. */
int evrow_complete(const struct evrow *r);
/* The decoded row; pointers stay valid until the next token is fed. */
void evrow_event(const struct evrow *r, struct row_event *out);
void evrow_sample(const struct evrow *r, struct row_sample *out);
void evrow_point(const struct evrow *r, struct row_point *out);
/* 0 when a decoded string holds a UTF-16 surrogate (U+D800..U+DFFF): yajl
 * validates raw UTF-8 but decodes a lone low-surrogate \u escape into such
 * invalid bytes (ED A0..BF xx); 1 otherwise. */
int evrow_text_ok(const char *s, size_t n);

/* "[start, end, name_index, global_tid, source_row]" etc. */
const char *evrow_shape(enum evrow_kind kind);

/* Bounds of an index column: checked row by row when the dictionary size
 * is known first, else settled at the end from the first negative index
 * and the running maxima (the first row past any bound is always one of
 * the rows that raised the maximum). */
struct evrow_bounds {
	int64_t known;               /* dictionary size, or -1 while unknown */
	int64_t bad_row, bad_value;  /* first negative (or, known, too large) */
	int64_t max;
	struct evrow_high { int64_t value, row; } *highs;
	size_t nhighs, cap;
};

void evrow_bounds_reset(struct evrow_bounds *b, int64_t known);
/* Notes the index v of row `row`; -1 when out of memory. */
int evrow_bounds_note(struct evrow_bounds *b, int64_t row, int64_t v);
/* The first row whose index is outside [0, size) (and its index in
 * *value), or -1. */
int64_t evrow_bounds_first_bad(const struct evrow_bounds *b, int64_t size,
                               int64_t *value);
void evrow_bounds_free(struct evrow_bounds *b);

#endif
