/* query_metrics: series windows with statistics, raw points and carried
 * settings; paging selects series (doc/query-semantics.md "metrics"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/num.h"
#include "query/qkinds.h"

#define POINTS_MAX 1000

/* A number kept beyond the row callback (big digits copied). */
struct held {
	struct num n;
	struct buf big;
};

static void hold(struct held *h, const struct num *n)
{
	h->n = *n;
	if (n->kind == NUM_BIG) {
		buf_reset(&h->big);
		buf_append(&h->big, n->big, n->big_len);
		h->n.big = h->big.data ? h->big.data : "";
	}
}

struct stats {
	int64_t samples, points_total;
	struct held min, max, last;
	double sum;
	int want_points;
	struct buf *points; /* first POINTS_MAX raw points, comma-separated */
};

static void emit_point(struct buf *b, const struct evidence_point *pt)
{
	buf_putc(b, '[');
	jsonout_real(b, pt->time);
	buf_putc(b, ',');
	num_emit(b, &pt->value);
	buf_putc(b, ',');
	jsonout_int(b, pt->source_id);
	buf_putc(b, ',');
	jsonout_int(b, pt->source_row);
	buf_putc(b, ']');
}

static int on_point(void *ctx, int64_t ordinal,
                    const struct evidence_point *pt)
{
	struct stats *s = ctx;
	(void)ordinal;
	if (s->want_points && s->points_total < POINTS_MAX) {
		if (s->points_total)
			buf_putc(s->points, ',');
		emit_point(s->points, pt);
	}
	s->points_total++;
	if (pt->value.kind == NUM_NULL)
		return 0;
	if (!s->samples) {
		hold(&s->min, &pt->value);
		hold(&s->max, &pt->value);
	} else {
		if (num_cmp(&pt->value, &s->min.n) < 0)
			hold(&s->min, &pt->value);
		if (num_cmp(&pt->value, &s->max.n) > 0)
			hold(&s->max, &pt->value);
	}
	hold(&s->last, &pt->value);
	s->sum += num_to_double(&pt->value);
	s->samples++;
	return 0;
}

static int on_carried(void *ctx, int64_t ordinal,
                      const struct evidence_point *pt)
{
	struct buf *b = ctx;
	(void)ordinal;
	if (b->len && b->data[b->len - 1] != '[')
		buf_putc(b, ',');
	emit_point(b, pt);
	return 0;
}

/* The text form of a rank for comparison: Python str() of the value. */
static void rank_text(const json_t *v, char *out, size_t n)
{
	if (json_is_string(v))
		snprintf(out, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		jsonout_format_real(out, json_real_value(v));
	else if (json_is_true(v))
		snprintf(out, n, "True");
	else if (json_is_false(v))
		snprintf(out, n, "False");
	else
		snprintf(out, n, "None");
}

int q_keep_series(const struct qctx *q, const json_t *s)
{
	if (!json_is_object(s))
		return 0;
	if (!q_field_in(&q->workers, s, "worker") ||
	    !q_field_in(&q->names, s, "name"))
		return 0;
	if (q->p->has_rank) {
		const json_t *r = json_object_get(s, "rank");
		char want[32];
		snprintf(want, sizeof want, "%lld", (long long)q->p->rank);
		if (json_is_string(r)) {
			if (strcmp(json_string_value(r), want) != 0 ||
			    json_string_length(r) != strlen(want))
				return 0;
		} else {
			char have[64];
			rank_text(r, have, sizeof have);
			if (strcmp(have, want) != 0)
				return 0;
		}
	}
	return 1;
}

static int one_series(struct qctx *q, const json_t *series, size_t index,
                      struct buf *points)
{
	static const char *const skip[] = {"points", NULL};
	struct dataset_window w = {q->start, q->end, q_wide(q)};
	struct buf *b = q->out;
	struct stats s;
	struct qitem it;
	int rc;

	memset(&s, 0, sizeof s);
	buf_init(&s.min.big, 0);
	buf_init(&s.max.big, 0);
	buf_init(&s.last.big, 0);
	s.want_points = q->p->points;
	s.points = points;
	buf_reset(points);
	rc = dataset_points(q->ds, (int64_t)index, &w, on_point, &s, q->e);
	if (rc)
		goto out;
	qi_begin(&it, q);
	qi_members(&it, series, skip);
	if (qi_key(&it, "samples"))
		jsonout_int(b, s.samples);
	if (qi_key(&it, "min")) {
		if (s.samples)
			num_emit(b, &s.min.n);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "max")) {
		if (s.samples)
			num_emit(b, &s.max.n);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "mean")) {
		double mean = s.samples ? s.sum / (double)s.samples : 0;
		/* integers beyond the double range make the sum infinite: no
		 * meaningful real mean, and JSON has no Infinity */
		if (s.samples && isfinite(mean))
			jsonout_real(b, mean);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "last")) {
		if (s.samples)
			num_emit(b, &s.last.n);
		else
			buf_puts(b, "null");
	}
	if (q_str_eq(series, "temporal", "setting") &&
	    qi_key(&it, "carried_setting")) {
		buf_putc(b, '[');
		rc = dataset_points_before(q->ds, (int64_t)index, q->start,
		                           on_carried, b, q->e);
		if (rc)
			goto out;
		buf_putc(b, ']');
	}
	if (q->p->points) {
		if (qi_key(&it, "points")) {
			buf_putc(b, '[');
			buf_append(b, points->data ? points->data : "",
			           points->len);
			buf_putc(b, ']');
		}
		if (qi_key(&it, "points_total"))
			jsonout_int(b, s.points_total);
		if (qi_key(&it, "points_truncated"))
			buf_puts(b, s.points_total > POINTS_MAX ? "true"
			                                        : "false");
	}
	qi_end(&it);
	if (s.min.big.failed || s.max.big.failed || s.last.big.failed ||
	    points->failed)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
out:
	buf_free(&s.min.big);
	buf_free(&s.max.big);
	buf_free(&s.last.big);
	return rc;
}

int query_metrics(struct qctx *q)
{
	const json_t *all = q_array(q->cat, "metrics"), *s;
	size_t total = json_array_size(all), n = 0, k, from, to;
	size_t *idx;
	struct buf points;
	int rc;

	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	idx = malloc((total ? total : 1) * sizeof *idx);
	if (!idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(all, k, s) {
		if (q_keep_series(q, s))
			idx[n++] = k;
	}
	buf_init(&points, 0);
	q_page(q, n, &from, &to);
	q_list_head(q, n);
	for (k = from; k < to && !rc; k++) {
		if (k > from)
			buf_putc(q->out, ',');
		rc = one_series(q, json_array_get(all, idx[k]), idx[k], &points);
	}
	buf_free(&points);
	free(idx);
	if (rc)
		return rc;
	q_list_tail(q);
	q_list_close(q, n);
	return 0;
}
