/* qstat: exact sums and order statistics (see qstat.h). */
#include "query/qstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

/* ---- sums of numbers of either kind ---- */

void qnsum_init(struct qnsum *s)
{
	memset(s, 0, sizeof *s);
}

void qnsum_free(struct qnsum *s)
{
	qsum_free(&s->real);
	qnsum_init(s);
}

void qnsum_add(struct qnsum *s, const struct num *v)
{
	if (v->kind == NUM_NULL)
		return;
	s->count++;
	if (v->kind == NUM_INT)
		s->isum += v->i;
	else
		s->any_real = 1; /* NUM_BIG never fits: the real sum answers */
	qsum_add(&s->real, v->kind == NUM_REAL ? v->d : num_to_double(v));
}

void qnsum_merge(struct qnsum *s, const struct qnsum *o)
{
	s->isum += o->isum;
	s->any_real |= o->any_real;
	s->count += o->count;
	qsum_merge(&s->real, &o->real);
}

struct num qnsum_value(const struct qnsum *s)
{
	struct num r;
	memset(&r, 0, sizeof r);
	if (!s->any_real && s->isum >= INT64_MIN && s->isum <= INT64_MAX) {
		r.kind = NUM_INT;
		r.i = (int64_t)s->isum;
		r.d = (double)r.i;
	} else {
		r.kind = NUM_REAL;
		r.d = qsum_value(&s->real);
	}
	return r;
}

/* ---- order statistics ---- */

static int qobs_cmp(const void *a, const void *b)
{
	const struct qobs *x = a, *y = b;
	int c = num_cmp(&x->v, &y->v);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

void qobs_sort(struct qobs *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, qobs_cmp);
}

size_t qobs_rank(const struct qobs *sorted, size_t n, unsigned p)
{
	/* ceil(p * n / 100) in integers: exact for any n */
	unsigned __int128 k = ((unsigned __int128)p * n + 99) / 100;
	size_t i;

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	i = (size_t)k - 1;
	while (i > 0 && num_cmp(&sorted[i - 1].v, &sorted[i].v) == 0)
		i--;
	return i;
}

const char *const qstat_names[QSTAT_N] = {"min", "p50", "p90",
                                           "p99", "max", "mean"};

void qstat_compute(const struct qobs *sorted, size_t n, struct num out[QSTAT_N])
{
	static const unsigned ranks[5] = {0, 50, 90, 99, 100};
	struct qsum s;

	memset(out, 0, QSTAT_N * sizeof *out);
	if (!n)
		return;
	for (int k = 0; k < 5; k++)
		out[k] = sorted[qobs_rank(sorted, n, ranks[k])].v;
	qsum_init(&s);
	for (size_t k = 0; k < n; k++)
		qsum_add(&s, sorted[k].v.kind == NUM_REAL
		                     ? sorted[k].v.d
		                     : num_to_double(&sorted[k].v));
	out[5].kind = NUM_REAL;
	out[5].d = qsum_value(&s) / (double)n;
	qsum_free(&s);
}

void qstat_emit(struct buf *b, const struct num st[QSTAT_N])
{
	buf_putc(b, '{');
	for (int k = 0; k < QSTAT_N; k++) {
		if (k)
			buf_putc(b, ',');
		jsonout_cstr(b, qstat_names[k]);
		buf_putc(b, ':');
		num_emit(b, &st[k]);
	}
	buf_putc(b, '}');
}

struct num qnum_of(const json_t *v)
{
	struct num r;
	memset(&r, 0, sizeof r);
	if (json_is_integer(v)) {
		r.kind = NUM_INT;
		r.i = (int64_t)json_integer_value(v);
		r.d = (double)r.i;
	} else if (json_is_real(v)) {
		r.kind = NUM_REAL;
		r.d = json_real_value(v);
	}
	return r;
}
