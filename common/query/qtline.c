/* qtline: shared timeline output (see qtline.h). */
#include "query/qtline.h"

#include <math.h>
#include <stdlib.h>

#include "base/jsonout.h"

static void elem(struct buf *b, const struct qtline_elems *e, size_t i)
{
	double v;
	if (e->held) {
		if (e->ints[i])
			num_emit(b, &e->held[i].v);
		else
			buf_puts(b, "null");
	} else if (e->ints) {
		jsonout_int(b, e->ints[i]);
	} else if (!e->div) {
		jsonout_real(b, qsum_value(&e->sums[i]));
	} else {
		v = e->div[i] > 0 ? qsum_value(&e->sums[i]) / e->div[i] : NAN;
		if (isfinite(v))
			jsonout_real(b, v);
		else
			buf_puts(b, "null");
	}
}

void qtline_values_array(struct qitem *it, const char *name, size_t n,
                         struct qtline_elems e)
{
	if (!qi_key(it, name))
		return;
	buf_putc(it->b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(it->b, ',');
		elem(it->b, &e, i);
	}
	buf_putc(it->b, ']');
}

void qtline_int_array(struct qitem *it, const char *name, const int64_t *v,
                      size_t n)
{
	qtline_values_array(it, name, n, (struct qtline_elems){v, NULL, NULL, NULL});
}

/* sums[i] / div[i] (div a count or a length); null where div is 0 or the
 * quotient is not finite. */
void qtline_quotient_array(struct qitem *it, const char *name,
                           const struct qsum *sums, const double *div,
                           size_t n)
{
	qtline_values_array(it, name, n, (struct qtline_elems){NULL, sums, div, NULL});
}

void qtline_sum_array(struct qitem *it, const char *name,
                      const struct qsum *sums, size_t n)
{
	qtline_values_array(it, name, n, (struct qtline_elems){NULL, sums, NULL, NULL});
}

struct qsum *qtline_new_sums(size_t n)
{
	return calloc(n ? n : 1, sizeof(struct qsum));
}

void qtline_free_sums(struct qsum *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		qsum_free(&s[i]);
	free(s);
}

int qtline_sums_failed(const struct qsum *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (qsum_failed(&s[i]))
			return 1;
	return 0;
}

/* `"total":T,"offset":O,"limit":L,"series":[` once the number of series
 * is known, before the first series. */
void qtline_series_head(struct qctx *q, size_t total, size_t *out)
{
	*out = total;
	buf_puts(q->out, "\"total\":");
	jsonout_int(q->out, (int64_t)total);
	buf_puts(q->out, ",\"offset\":");
	jsonout_int(q->out, q->p->offset);
	buf_puts(q->out, ",\"limit\":");
	jsonout_int(q->out, q->p->limit);
	buf_puts(q->out, ",\"series\":[");
}

/* `{"key":` + key, `,"values":` and the values item begun. */
void qtline_series_open(struct qctx *q, struct qitem *it)
{
	buf_puts(q->out, ",\"values\":");
	qi_begin(it, q);
}

void qtline_series_close(struct qitem *it)
{
	qi_end(it);
	buf_putc(it->b, '}');
}

