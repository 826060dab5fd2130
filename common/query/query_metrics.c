/* query_metrics: series windows with statistics, raw points and carried
 * settings; paging selects series (doc/query-semantics.md "metrics"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/num.h"
#include "base/numstats.h"
#include "query/qkinds.h"
#include "query/qmgroup.h"

#define POINTS_MAX 1000

struct stats {
	struct numstats n;
	int want_points;
	struct buf *points; /* first POINTS_MAX raw points, comma-separated */
};

static void emit_point(struct buf *b, const struct row_point *pt)
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
                    const struct row_point *pt)
{
	struct stats *s = ctx;
	(void)ordinal;
	if (s->want_points && s->n.points_total < POINTS_MAX) {
		if (s->n.points_total)
			buf_putc(s->points, ',');
		emit_point(s->points, pt);
	}
	numstats_add(&s->n, &pt->value);
	return 0;
}

static int on_carried(void *ctx, int64_t ordinal,
                      const struct row_point *pt)
{
	struct buf *b = ctx;
	(void)ordinal;
	if (b->len && b->data[b->len - 1] != '[')
		buf_putc(b, ',');
	emit_point(b, pt);
	return 0;
}

/* The text form of a rank for comparison: Python str() of the value. */
static int one_series(struct qctx *q, const json_t *series, size_t index,
                      struct buf *points)
{
	static const char *const skip[] = {"points", NULL};
	static const char *const stats[] = {"samples", "min", "max", "mean",
	                                    "last"};
	struct row_window w = {q->start, q->end, q_wide(q)};
	struct buf *b = q->out;
	struct stats s;
	struct qitem it;
	int rc = 0, have = 0;

	memset(&s, 0, sizeof s);
	numstats_init(&s.n);
	s.want_points = q->p->points;
	s.points = points;
	buf_reset(points);
	/* the whole run without raw points: the build-time summary */
	if (!q->p->points && q_whole_run(q))
		rc = dataset_run_series(q->ds, (int64_t)index, &have, &s.n, q->e);
	if (!rc && !have)
		rc = dataset_points(q->ds, (int64_t)index, &w, on_point, &s, q->e);
	if (rc)
		goto out;
	qi_begin(&it, q);
	qi_members(&it, series, skip);
	for (size_t k = 0; k < sizeof stats / sizeof stats[0]; k++)
		if (qi_key(&it, stats[k]))
			numstats_member(&s.n, stats[k], b);
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
			jsonout_int(b, s.n.points_total);
		if (qi_key(&it, "points_truncated"))
			buf_puts(b, s.n.points_total > POINTS_MAX ? "true"
			                                          : "false");
	}
	qi_end(&it);
	if (numstats_failed(&s.n) || points->failed)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
out:
	numstats_free(&s.n);
	return rc;
}

int query_metrics(struct qctx *q)
{
	const json_t *all = q_array(q->cat, "metrics"), *s;
	size_t total = json_array_size(all), n = 0, k, from, to;
	size_t *idx;
	struct buf points;
	int rc;

	if (q->p->group_by)
		return qmgroup_metrics(q);
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
