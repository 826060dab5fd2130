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

void numstats_member(const struct numstats *s, const char *member,
                     struct buf *b)
{
	if (!strcmp(member, "samples")) {
		jsonout_int(b, s->samples);
	} else if (!s->samples) {
		buf_puts(b, "null");
	} else if (!strcmp(member, "min")) {
		num_emit(b, &s->min.n);
	} else if (!strcmp(member, "max")) {
		num_emit(b, &s->max.n);
	} else if (!strcmp(member, "last")) {
		num_emit(b, &s->last.n);
	} else {
		/* integers beyond the double range make the sum infinite: no
		 * meaningful real mean, and JSON has no Infinity */
		double mean = s->sum / (double)s->samples;
		if (isfinite(mean))
			jsonout_real(b, mean);
		else
			buf_puts(b, "null");
	}
}

static int set_held(struct numstats_held *h, const char *text)
{
	struct num n;

	if (!text || num_parse(text, strlen(text), &n))
		return -1;
	hold(h, &n); /* copies big digits out of text */
	return h->big.failed ? -1 : 0;
}

int numstats_set(struct numstats *s, int64_t samples, int64_t points_total,
                 const char *min, const char *max, const char *last,
                 double sum)
{
	s->samples = samples;
	s->points_total = points_total;
	s->sum = sum;
	if (!samples)
		return 0;
	return set_held(&s->min, min) || set_held(&s->max, max) ||
	       set_held(&s->last, last) ? -1 : 0;
}
