/* evrow: decoding one streamed row from its tokens (see evrow.h). */
#include "ingest/evrow.h"
#include "base/numtext.h"
#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Field kinds per row kind: 'T' time, 'I' integer, 'S' string, 'V' number
 * or null. */
static const char *const fields[] = { "TTISI", "TSII", "TVII" };
static const int nfields[] = { 5, 4, 4 };

static const char *const shapes[] = {
	"[start, end, name_index, global_tid, source_row]",
	"[time, global_tid, stack_index, source_row]",
	"[time, value, source_id, source_row]",
};

const char *evrow_shape(enum evrow_kind kind)
{
	return shapes[kind];
}

void evrow_init(struct evrow *r)
{
	r->kind = EVROW_EVENT;
	r->k = 0;
	buf_init(&r->tid, 0);
	buf_init(&r->big, 0);
}

void evrow_free(struct evrow *r)
{
	buf_free(&r->tid);
	buf_free(&r->big);
}

void evrow_begin(struct evrow *r, enum evrow_kind kind)
{
	r->kind = kind;
	r->k = 0;
}

static char want(const struct evrow *r)
{
	return r->k < nfields[r->kind] ? fields[r->kind][r->k] : 0;
}

int evrow_number(struct evrow *r, const char *s, size_t n)
{
	char w = want(r);
	int64_t iv;
	double d;
	int kind;

	if (w == 'T') {
		int is_int;
		if (numtext_number(s, n, &d, &is_int))
			return is_int ? EVROW_BIG : EVROW_RANGE;
		/* an integer time must fit int64 like any integer */
		if (is_int && (d >= 9223372036854775807.0 || d < -9223372036854775807.0) &&
		    numtext_int(s, n, &iv) == NUMTEXT_BIG)
			return EVROW_BIG;
		if (is_int && d == 0)
			d = 0.0; /* the integer -0 is 0 */
		if (r->k == 0)
			r->t0 = d;
		else
			r->t1 = d;
	} else if (w == 'I') {
		kind = numtext_int(s, n, &iv);
		if (kind == NUMTEXT_REAL)
			return EVROW_SHAPE;
		if (kind == NUMTEXT_BIG)
			return EVROW_BIG;
		r->i[r->k - 2] = iv; /* the integers are fields 2.. */
	} else if (w == 'V') {
		struct num *v = &r->value;
		kind = numtext_int(s, n, &iv);
		if (kind == NUMTEXT_INT) {
			v->kind = NUM_INT, v->i = iv, v->d = (double)iv;
		} else if (kind == NUMTEXT_BIG) {
			buf_reset(&r->big);
			buf_append(&r->big, s, n);
			if (r->big.failed)
				return EVROW_NOMEM;
			v->kind = NUM_BIG, v->big = r->big.data, v->big_len = n;
			if (numtext_real(s, n, &v->d))
				v->d = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
		} else {
			if (numtext_real(s, n, &d))
				return EVROW_RANGE;
			v->kind = NUM_REAL, v->d = d;
		}
	} else {
		return EVROW_SHAPE;
	}
	r->k++;
	return EVROW_OK;
}

int evrow_text_ok(const char *s, size_t n)
{
	const char *p = memchr(s, 0xED, n);

	while (p) {
		size_t k = (size_t)(p - s);
		if (k + 1 < n && (unsigned char)s[k + 1] >= 0xA0)
			return 0;
		p = k + 1 < n ? memchr(p + 1, 0xED, n - k - 1) : NULL;
	}
	return 1;
}

int evrow_string(struct evrow *r, const char *s, size_t n)
{
	if (want(r) != 'S')
		return EVROW_SHAPE;
	if (!evrow_text_ok(s, n))
		return EVROW_UTF8;
	buf_reset(&r->tid);
	buf_append(&r->tid, s, n);
	if (r->tid.failed)
		return EVROW_NOMEM;
	r->k++;
	return EVROW_OK;
}

int evrow_null(struct evrow *r)
{
	if (want(r) != 'V')
		return EVROW_SHAPE;
	r->value.kind = NUM_NULL;
	r->k++;
	return EVROW_OK;
}

int evrow_complete(const struct evrow *r)
{
	return r->k == nfields[r->kind];
}

void evrow_event(const struct evrow *r, struct row_event *out)
{
	out->start = r->t0;
	out->end = r->t1;
	out->name = r->i[0];
	out->tid = r->tid.data ? r->tid.data : "";
	out->tid_len = r->tid.len;
	out->source_row = r->i[2];
}

void evrow_sample(const struct evrow *r, struct row_sample *out)
{
	out->time = r->t0;
	out->tid = r->tid.data ? r->tid.data : "";
	out->tid_len = r->tid.len;
	out->stack = r->i[0];
	out->source_row = r->i[1];
}

void evrow_point(const struct evrow *r, struct row_point *out)
{
	out->time = r->t0;
	out->value = r->value;
	out->source_id = r->i[0];
	out->source_row = r->i[1];
	out->text = NULL;
}

/* ---- dictionary bounds ------------------------------------------------ */

void evrow_bounds_reset(struct evrow_bounds *b, int64_t known)
{
	b->known = known;
	b->bad_row = -1;
	b->bad_value = 0;
	b->max = -1;
	b->nhighs = 0;
}

int evrow_bounds_note(struct evrow_bounds *b, int64_t row, int64_t v)
{
	if (v < 0 || (b->known >= 0 && v >= b->known)) {
		if (b->bad_row < 0)
			b->bad_row = row, b->bad_value = v;
		return 0;
	}
	if (b->known >= 0 || v <= b->max)
		return 0;
	b->max = v;
	if (vec_reserve(&b->highs, &b->cap, b->nhighs + 1, sizeof *b->highs))
		return -1;
	b->highs[b->nhighs].value = v;
	b->highs[b->nhighs++].row = row;
	return 0;
}

int64_t evrow_bounds_first_bad(const struct evrow_bounds *b, int64_t size,
                               int64_t *value)
{
	int64_t row = b->bad_row;

	*value = b->bad_value;
	for (size_t k = 0; k < b->nhighs; k++) {
		if (b->highs[k].value >= size) {
			if (row < 0 || b->highs[k].row < row)
				row = b->highs[k].row, *value = b->highs[k].value;
			break;
		}
	}
	return row;
}

void evrow_bounds_free(struct evrow_bounds *b)
{
	free(b->highs);
	b->highs = NULL;
	b->nhighs = b->cap = 0;
}
