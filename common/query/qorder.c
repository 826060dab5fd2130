/* qorder: sort keys, values and the stable sort (see qorder.h). */
#include "query/qorder.h"

#include <stdlib.h>
#include <string.h>

static const char *const requests_keys[] = {
	"start", "end", "first", "ttft_ms", "duration", "input_tokens",
	"output_tokens", "cached_tokens", "id", "session", "agent", "status",
	"span_count", NULL};
static const char *const nsys_keys[] = {"start", "end", "duration", "name",
                                        "profile", NULL};
static const char *const gpu_keys[] = {"start", "duration", "name",
                                       "queue_delay", NULL};
static const char *const spans_keys[] = {"start", "end", "duration", "name",
                                         NULL};
static const char *const iterations_keys[] = {"start", "end", "duration",
                                              "worker", NULL};
static const char *const sessions_keys[] = {"start", "end", "duration", "id",
                                            "requests", NULL};

/* timeline: the bucket keys of every source (qtsort.h checks them per
 * source; this list feeds the schema's enum) */
static const char *const timeline_keys[] = {
	"start", "arrivals", "completions", "first_tokens", "in_flight",
	"ttft_ms_mean", "overlapping", "active", "samples", "min", "max",
	"mean", "series", "sum_of_means", "kernels", "busy", NULL};

static const struct {
	const char *kind;
	const char *const *keys;
} sortable[] = {
	{"requests", requests_keys},     {"nsys", nsys_keys},
	{"server_spans", spans_keys},    {"iterations", iterations_keys},
	{"sessions", sessions_keys},     {"timeline", timeline_keys},
	{"gpu", gpu_keys},
};

const char *const *qorder_keys(const char *kind)
{
	for (size_t k = 0; k < sizeof sortable / sizeof *sortable; k++)
		if (!strcmp(sortable[k].kind, kind))
			return sortable[k].keys;
	return NULL;
}

json_t *qorder_key_enum(void)
{
	json_t *a = json_array();
	for (int desc = 0; a && desc < 2; desc++)
		for (size_t k = 0; k < sizeof sortable / sizeof *sortable; k++)
			for (const char *const *s = sortable[k].keys; *s; s++) {
				char name[64];
				size_t i;
				const json_t *v;
				int seen = 0;
				snprintf(name, sizeof name, "%s%s",
				         desc ? "-" : "", *s);
				json_array_foreach(a, i, v) {
					if (!strcmp(json_string_value(v), name))
						seen = 1;
				}
				if (!seen && json_array_append_new(
				                     a, json_string(name))) {
					json_decref(a);
					return NULL;
				}
			}
	return a;
}

int qorder_parse(const char *kind, const struct qlist *sort, struct qorder *o,
                 struct err *e)
{
	return qorder_parse_keys(kind, qorder_keys(kind), sort, o, e);
}

int qorder_parse_keys(const char *kind, const char *const *keys,
                      const struct qlist *sort, struct qorder *o,
                      struct err *e)
{
	o->keys = NULL;
	o->n = 0;
	if (!keys || !sort->n)
		return 0;
	o->keys = calloc(sort->n, sizeof *o->keys);
	if (!o->keys)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; k < sort->n; k++) {
		const char *name = sort->v[k];
		const char *const *s;
		int desc = name[0] == '-';
		if (desc)
			name++;
		for (s = keys; *s && strcmp(*s, name); s++)
			;
		if (!*s) {
			char list[512];
			size_t len = 0;
			list[0] = 0;
			for (s = keys; *s; s++)
				len += (size_t)snprintf(
					list + len, len < sizeof list ? sizeof list - len : 0,
					"%s%s", s == keys ? "" : ", ", *s);
			qorder_free(o);
			return err_set(e, ERR_USAGE,
			               "Unknown sort key '%s' for %s; choose from %s",
			               name, kind, list);
		}
		o->keys[o->n].name = *s;
		o->keys[o->n].desc = desc;
		o->n++;
	}
	return 0;
}

void qorder_free(struct qorder *o)
{
	free(o->keys);
	o->keys = NULL;
	o->n = 0;
}

void qval_number(double d, struct qval *out)
{
	memset(out, 0, sizeof *out);
	out->type = QV_NUMBER;
	out->d = d;
}

void qval_int(int64_t i, struct qval *out)
{
	qval_number((double)i, out);
	out->is_int = 1;
	out->i = i;
}

void qval_of_json(const json_t *v, struct qval *out)
{
	memset(out, 0, sizeof *out);
	if (json_is_integer(v)) {
		qval_int((int64_t)json_integer_value(v), out);
	} else if (json_is_real(v)) {
		qval_number(json_real_value(v), out);
	} else if (json_is_string(v)) {
		out->type = QV_STRING;
		out->s = json_string_value(v);
		out->len = json_string_length(v);
	} else {
		out->type = QV_NULL;
	}
}

int qval_cmp(const struct qval *a, const struct qval *b, int desc)
{
	int c;
	if (a->type != b->type) /* nulls last, also when descending */
		return a->type < b->type ? -1 : 1;
	if (a->type == QV_NULL)
		return 0;
	if (a->type == QV_NUMBER) {
		if (a->is_int && b->is_int)
			c = a->i < b->i ? -1 : a->i > b->i;
		else
			c = a->d < b->d ? -1 : a->d > b->d;
	} else {
		size_t n = a->len < b->len ? a->len : b->len;
		c = memcmp(a->s, b->s, n);
		if (!c)
			c = a->len < b->len ? -1 : a->len > b->len;
		else
			c = c < 0 ? -1 : 1;
	}
	return desc ? -c : c;
}

/* end - start of obj, or null when either is not a number. */
static void duration_of(const json_t *obj, struct qval *out)
{
	const json_t *a = json_object_get(obj, "start");
	const json_t *b = json_object_get(obj, "end");
	if (json_is_number(a) && json_is_number(b))
		qval_number(json_number_value(b) - json_number_value(a), out);
	else
		qval_of_json(NULL, out);
}

static void size_of(const json_t *arr, struct qval *out)
{
	if (json_is_array(arr))
		qval_int((int64_t)json_array_size(arr), out);
	else
		qval_of_json(NULL, out);
}

void qorder_value_of(const char *kind, const char *key, const json_t *obj,
                     struct qval *out)
{
	if (!strcmp(key, "duration"))
		duration_of(obj, out);
	else if (!strcmp(kind, "requests") && !strcmp(key, "span_count"))
		qval_int((int64_t)json_array_size(json_object_get(obj, "spans")),
		         out);
	else if (!strcmp(kind, "sessions") && !strcmp(key, "requests"))
		size_of(json_object_get(obj, "requests"), out);
	else
		qval_of_json(json_object_get(obj, key), out);
}

struct row {
	size_t pos;        /* default order */
	const json_t *obj;
	struct qval *vals; /* one per key */
};

static int row_cmp(const void *a, const void *b, void *ctx)
{
	const struct row *x = a, *y = b;
	const struct qorder *o = ctx;
	for (size_t k = 0; k < o->n; k++) {
		int c = qval_cmp(&x->vals[k], &y->vals[k], o->keys[k].desc);
		if (c)
			return c;
	}
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int qorder_sort_objects(const struct qorder *o, const char *kind,
                        const json_t **elems, size_t n, struct err *e)
{
	struct row *rows;
	struct qval *vals;

	if (!o->n || n < 2)
		return 0;
	rows = malloc(n * sizeof *rows);
	vals = malloc(n * o->n * sizeof *vals);
	if (!rows || !vals) {
		free(rows);
		free(vals);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		rows[i].pos = i;
		rows[i].obj = elems[i];
		rows[i].vals = vals + i * o->n;
		for (size_t k = 0; k < o->n; k++)
			qorder_value_of(kind, o->keys[k].name, elems[i],
			                &rows[i].vals[k]);
	}
	qsort_r(rows, n, sizeof *rows, row_cmp, (void *)o);
	for (size_t i = 0; i < n; i++)
		elems[i] = rows[i].obj;
	free(rows);
	free(vals);
	return 0;
}
