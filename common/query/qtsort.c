/* qtsort: the buckets of a one-series timeline in sort order (see
 * qtsort.h). */
#include "query/qtsort.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

static const char *const requests_keys[] = {
	"start", "arrivals", "completions", "first_tokens", "in_flight",
	"ttft_ms_mean", NULL};
static const char *const nsys_keys[] = {"start", "overlapping", "active",
                                        NULL};
static const char *const cpu_keys[] = {"start", "samples", NULL};
static const char *const metrics_keys[] = {"start", "samples", "min", "max",
                                           "mean", NULL};
static const char *const metric_group_keys[] = {
	"start", "series", "samples", "min", "max", "mean", "sum_of_means",
	NULL};

const char *const *qtsort_keys(const char *of, int grouped)
{
	if (!of || !strcmp(of, "requests"))
		return requests_keys;
	if (!strcmp(of, "nsys"))
		return nsys_keys;
	if (!strcmp(of, "cpu"))
		return cpu_keys;
	return grouped ? metric_group_keys : metrics_keys;
}

int qtsort_check(struct qctx *q)
{
	const char *of = q->p->of;
	int grouped = of && !strcmp(of, "metrics") && q->p->group_by;
	return qorder_parse_keys("timeline", qtsort_keys(of, grouped),
	                         &q->p->sort, &q->order, q->e);
}

struct bsort {
	const struct qorder *o;
	const json_t *buckets, *values;
};

static void bucket_value(const struct bsort *s, size_t i, const char *key,
                         struct qval *v)
{
	if (!strcmp(key, "start"))
		qval_of_json(json_array_get(s->buckets, i), v);
	else
		qval_of_json(json_array_get(json_object_get(s->values, key), i),
		             v);
}

static int bucket_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct bsort *s = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	for (size_t k = 0; k < s->o->n; k++) {
		struct qval x, y;
		int c;
		bucket_value(s, a, s->o->keys[k].name, &x);
		bucket_value(s, b, s->o->keys[k].name, &y);
		if ((c = qval_cmp(&x, &y, s->o->keys[k].desc)) != 0)
			return c;
	}
	return (a > b) - (a < b); /* ties keep time order */
}

/* Item {"start", "end", <values at i>} (--fields picks the values). */
static void emit_bucket(struct qctx *q, const json_t *j,
                        const struct bsort *s, size_t i)
{
	const json_t *range = json_object_get(j, "range"), *v;
	size_t nb = json_array_size(s->buckets);
	const char *key;
	/* the values after start and end: an item already begun */
	struct qitem it = {q->out, &q->p->fields, 1};

	buf_puts(q->out, "{\"start\":");
	jsonout_tree(q->out, json_array_get(s->buckets, i), 0);
	buf_puts(q->out, ",\"end\":");
	jsonout_tree(q->out, i + 1 < nb ? json_array_get(s->buckets, i + 1)
	                                : json_array_get(range, 1),
	             0);
	json_object_foreach((json_t *)s->values, key, v) {
		if (qi_key(&it, key))
			jsonout_tree(q->out, json_array_get(v, i), 0);
	}
	qi_end(&it);
}

static int reshape(struct qctx *q, const json_t *j)
{
	struct bsort s = {&q->order, json_object_get(j, "buckets"), NULL};
	const json_t *series = json_object_get(j, "series");
	const json_t *first = json_array_get(series, 0), *v;
	size_t n = first ? json_array_size(s.buckets) : 0, *idx, from, to;
	const char *key;
	int after = 0;

	s.values = json_object_get(first, "values");
	idx = malloc((n ? n : 1) * sizeof *idx);
	if (!idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, bucket_cmp, &s);
	buf_puts(q->out, "{\"of\":");
	jsonout_tree(q->out, json_object_get(j, "of"), 0);
	buf_puts(q->out, ",\"bucket\":");
	jsonout_tree(q->out, json_object_get(j, "bucket"), 0);
	if (first) {
		buf_puts(q->out, ",\"key\":");
		jsonout_tree(q->out, json_object_get(first, "key"), 0);
	}
	buf_puts(q->out, ",\"total\":");
	jsonout_int(q->out, (int64_t)n);
	buf_puts(q->out, ",\"items\":[");
	q_page(q, n, &from, &to);
	for (size_t k = from; k < to; k++) {
		if (k > from)
			buf_putc(q->out, ',');
		emit_bucket(q, j, &s, idx[k]);
	}
	buf_puts(q->out, "],\"offset\":");
	jsonout_int(q->out, q->p->offset);
	buf_puts(q->out, ",\"limit\":");
	jsonout_int(q->out, q->p->limit);
	buf_puts(q->out, ",\"range\":");
	jsonout_tree(q->out, json_object_get(j, "range"), 0);
	/* what follows the series (request, group_by, notes) as it was */
	json_object_foreach((json_t *)j, key, v) {
		if (after) {
			buf_putc(q->out, ',');
			jsonout_cstr(q->out, key);
			buf_putc(q->out, ':');
			jsonout_tree(q->out, v, 0);
		}
		if (!strcmp(key, "series"))
			after = 1;
	}
	buf_putc(q->out, '}');
	free(idx);
	return 0;
}

int qtsort_run(struct qctx *q, int (*plain)(struct qctx *q))
{
	const struct query_params *saved_p = q->p;
	struct buf *saved_out = q->out;
	struct qorder saved_order = q->order;
	struct query_params pp = *q->p;
	struct buf tmp;
	json_error_t jerr;
	json_t *j = NULL;
	int64_t total;
	int rc;

	pp.offset = 0;
	pp.limit = 1;
	memset(&pp.fields, 0, sizeof pp.fields);
	memset(&pp.sort, 0, sizeof pp.sort);
	buf_init(&tmp, 0);
	q->p = &pp;
	q->out = &tmp;
	memset(&q->order, 0, sizeof q->order);
	rc = plain(q);
	q->p = saved_p;
	q->out = saved_out;
	q->order = saved_order;
	if (!rc && tmp.failed)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc && !(j = json_loadb(tmp.data, tmp.len, 0, &jerr)))
		rc = err_set(q->e, ERR_DATA,
		             "Cannot sort these buckets (%s)", jerr.text);
	buf_free(&tmp);
	if (rc)
		return rc;
	total = json_integer_value(json_object_get(j, "total"));
	if (total > 1)
		rc = err_set(q->e, ERR_USAGE,
		             "--sort orders the buckets of one series; this "
		             "timeline has %lld: select one with --profile, "
		             "--worker, --rank or --name",
		             (long long)total);
	else
		rc = reshape(q, j);
	json_decref(j);
	return rc;
}
