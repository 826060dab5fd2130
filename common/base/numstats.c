/* numstats: sequential metric statistics (see numstats.h). */
#include "base/numstats.h"

#include <math.h>
#include <string.h>

#include "base/jsonout.h"

static void hold(struct numstats_held *h, const struct num *n)
{
	h->n = *n;
	if (n->kind == NUM_BIG) {
		buf_reset(&h->big);
		buf_append(&h->big, n->big, n->big_len);
		h->n.big = h->big.data ? h->big.data : "";
	}
}

void numstats_init(struct numstats *s)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->min.big, 0);
	buf_init(&s->max.big, 0);
	buf_init(&s->last.big, 0);
}

void numstats_free(struct numstats *s)
{
	buf_free(&s->min.big);
	buf_free(&s->max.big);
	buf_free(&s->last.big);
}

void numstats_add(struct numstats *s, const struct num *v)
{
	s->points_total++;
	if (v->kind == NUM_NULL)
		return;
	if (!s->samples) {
		hold(&s->min, v);
		hold(&s->max, v);
	} else {
		if (num_cmp(v, &s->min.n) < 0)
			hold(&s->min, v);
		if (num_cmp(v, &s->max.n) > 0)
			hold(&s->max, v);
	}
	hold(&s->last, v);
	s->sum += num_to_double(v);
	s->samples++;
}

int numstats_failed(const struct numstats *s)
{
	return s->min.big.failed || s->max.big.failed || s->last.big.failed;
}

/* The mean: integers beyond the double range make the sum infinite, which
 * has no meaningful real mean (and JSON has no Infinity): null. */
static void put_mean(struct buf *b, int64_t samples, double sum)
{
	double mean = sum / (double)samples;
	if (isfinite(mean))
		jsonout_real(b, mean);
	else
		buf_puts(b, "null");
}

void numstats_emit(const struct numstats *s, struct buf *b)
{
	buf_puts(b, "\"samples\":");
	jsonout_int(b, s->samples);
	if (!s->samples) {
		buf_puts(b, ",\"min\":null,\"max\":null,\"mean\":null,"
		            "\"last\":null");
		return;
	}
	buf_puts(b, ",\"min\":");
	num_emit(b, &s->min.n);
	buf_puts(b, ",\"max\":");
	num_emit(b, &s->max.n);
	buf_puts(b, ",\"mean\":");
	put_mean(b, s->samples, s->sum);
	buf_puts(b, ",\"last\":");
	num_emit(b, &s->last.n);
}

void numstats_emit_parts(struct buf *b, int64_t samples, const char *min,
                         const char *max, const char *last, double sum)
{
	buf_puts(b, "\"samples\":");
	jsonout_int(b, samples);
	if (!samples || !min || !max || !last) {
		buf_puts(b, ",\"min\":null,\"max\":null,\"mean\":null,"
		            "\"last\":null");
		return;
	}
	buf_puts(b, ",\"min\":");
	buf_puts(b, min);
	buf_puts(b, ",\"max\":");
	buf_puts(b, max);
	buf_puts(b, ",\"mean\":");
	put_mean(b, samples, sum);
	buf_puts(b, ",\"last\":");
	buf_puts(b, last);
}
