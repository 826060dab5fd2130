/* qtsort: the buckets of a one-series timeline in sort order (see
 * qtsort.h). */
#include "query/qtsort.h"

#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "base/jsonout.h"

static const char *const requests_keys[] = {
	"start", "arrivals", "completions", "first_tokens", "in_flight",
	"ttft_ms_mean", NULL};
static const char *const nsys_keys[] = {"start", "overlapping", "active",
                                        NULL};
static const char *const cpu_keys[] = {"start", "samples", NULL};
static const char *const gpu_keys[] = {"start", "kernels", "busy", NULL};
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
	if (!strcmp(of, "gpu"))
		return gpu_keys;
	return grouped ? metric_group_keys : metrics_keys;
}

int qtsort_check(struct qctx *q)
{
	const char *of = q->p->of;
	int grouped = of && !strcmp(of, "metrics") && q->p->group_by;
	return qorder_parse_keys("timeline", qtsort_keys(of, grouped),
	                         &q->p->sort, &q->order, q->e);
}

/* The plain answer is re-read with yajl's tree, whose numbers keep their
 * text: an integer beyond 64 bits prints back as it was. */
static yajl_val member(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t k = 0; k < obj->u.object.len; k++)
		if (!strcmp(obj->u.object.keys[k], key))
			return obj->u.object.values[k];
	return NULL;
}

static yajl_val element(yajl_val arr, size_t i)
{
	return YAJL_IS_ARRAY(arr) && i < arr->u.array.len ? arr->u.array.values[i]
	                                                  : NULL;
}

static size_t length(yajl_val arr)
{
	return YAJL_IS_ARRAY(arr) ? arr->u.array.len : 0;
}

/* Writes v as JSON (numbers as their text). */
static void put(struct buf *b, yajl_val v)
{
	if (YAJL_IS_NUMBER(v)) {
		buf_puts(b, v->u.number.r);
	} else if (YAJL_IS_STRING(v)) {
		jsonout_cstr(b, v->u.string);
	} else if (YAJL_IS_TRUE(v)) {
		buf_puts(b, "true");
	} else if (YAJL_IS_FALSE(v)) {
		buf_puts(b, "false");
	} else if (YAJL_IS_ARRAY(v)) {
		for (size_t k = 0; k < v->u.array.len; k++) {
			buf_putc(b, k ? ',' : '[');
			put(b, v->u.array.values[k]);
		}
		buf_puts(b, v->u.array.len ? "]" : "[]");
	} else if (YAJL_IS_OBJECT(v)) {
		for (size_t k = 0; k < v->u.object.len; k++) {
			buf_putc(b, k ? ',' : '{');
			jsonout_cstr(b, v->u.object.keys[k]);
			buf_putc(b, ':');
			put(b, v->u.object.values[k]);
		}
		buf_puts(b, v->u.object.len ? "}" : "{}");
	} else {
		buf_puts(b, "null");
	}
}

static void qval_of(yajl_val v, struct qval *out)
{
	if (YAJL_IS_INTEGER(v))
		qval_int(v->u.number.i, out);
	else if (YAJL_IS_NUMBER(v) &&
	         (v->u.number.flags & YAJL_NUMBER_DOUBLE_VALID))
		qval_number(v->u.number.d, out);
	else if (YAJL_IS_STRING(v)) {
		memset(out, 0, sizeof *out);
		out->type = QV_STRING;
		out->s = v->u.string;
		out->len = strlen(v->u.string);
	} else {
		qval_of_json(NULL, out); /* null */
	}
}

struct bsort {
	const struct qorder *o;
	yajl_val buckets, values;
};

static void bucket_value(const struct bsort *s, size_t i, const char *key,
                         struct qval *v)
{
	if (!strcmp(key, "start"))
		qval_of(element(s->buckets, i), v);
	else
		qval_of(element(member(s->values, key), i), v);
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
static void emit_bucket(struct qctx *q, yajl_val j, const struct bsort *s,
                        size_t i)
{
	size_t nb = length(s->buckets);
	/* the values after start and end: an item already begun */
	struct qitem it = {q->out, &q->p->fields, 1};
	yajl_val v = s->values;

	buf_puts(q->out, "{\"start\":");
	put(q->out, element(s->buckets, i));
	buf_puts(q->out, ",\"end\":");
	put(q->out, i + 1 < nb ? element(s->buckets, i + 1)
	                       : element(member(j, "range"), 1));
	for (size_t k = 0; YAJL_IS_OBJECT(v) && k < v->u.object.len; k++)
		if (qi_key(&it, v->u.object.keys[k]))
			put(q->out, element(v->u.object.values[k], i));
	qi_end(&it);
}

static int reshape(struct qctx *q, yajl_val j)
{
	struct bsort s = {&q->order, member(j, "buckets"), NULL};
	yajl_val first = element(member(j, "series"), 0);
	size_t n = first ? length(s.buckets) : 0, *idx, from, to;
	int after = 0;

	s.values = member(first, "values");
	idx = malloc((n ? n : 1) * sizeof *idx);
	if (!idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, bucket_cmp, &s);
	buf_puts(q->out, "{\"of\":");
	put(q->out, member(j, "of"));
	buf_puts(q->out, ",\"bucket\":");
	put(q->out, member(j, "bucket"));
	if (first) {
		buf_puts(q->out, ",\"key\":");
		put(q->out, member(first, "key"));
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
	put(q->out, member(j, "range"));
	/* what follows the series (request, group_by, notes) as it was */
	for (size_t k = 0; k < j->u.object.len; k++) {
		if (after) {
			buf_putc(q->out, ',');
			jsonout_cstr(q->out, j->u.object.keys[k]);
			buf_putc(q->out, ':');
			put(q->out, j->u.object.values[k]);
		}
		if (!strcmp(j->u.object.keys[k], "series"))
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
	char msg[128];
	yajl_val j = NULL, tv;
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
	if (!rc && (!(j = yajl_tree_parse(tmp.data, msg, sizeof msg)) ||
	            !YAJL_IS_OBJECT(j)))
		rc = err_set(q->e, ERR_DATA, "Cannot sort these buckets (%s)",
		             j ? "not an object" : msg);
	buf_free(&tmp);
	if (rc) {
		yajl_tree_free(j);
		return rc;
	}
	tv = member(j, "total");
	total = YAJL_IS_INTEGER(tv) ? tv->u.number.i : 0;
	if (total > 1)
		rc = err_set(q->e, ERR_USAGE,
		             "--sort orders the buckets of one series; this "
		             "timeline has %lld: select one with --profile, "
		             "--worker, --rank or --name",
		             (long long)total);
	else
		rc = reshape(q, j);
	yajl_tree_free(j);
	return rc;
}
