/* qshared: the helpers every query kind shares (see qshared.h). */
#include "query/qshared.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/vec.h"

const json_t *q_array(const json_t *obj, const char *key)
{
	const json_t *a = obj ? json_object_get(obj, key) : NULL;
	return json_is_array(a) ? a : NULL;
}

double q_number(const json_t *obj, const char *key, int *ok)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_number(v)) {
		*ok = 0;
		return 0;
	}
	*ok = 1;
	return json_number_value(v);
}

int q_overlaps(const struct qctx *q, const json_t *obj, const char *kstart,
               const char *kend)
{
	int ok1, ok2;
	double a = q_number(obj, kstart, &ok1), b = q_number(obj, kend, &ok2);
	return ok1 && ok2 && a <= q->end && b >= q->start;
}

int q_wide(const struct qctx *q)
{
	return q->end - q->start >= q->duration / 4;
}

int q_whole_run(const struct qctx *q)
{
	return q->start == 0 && q->end == q->duration;
}

int q_given(const char *s)
{
	return s && *s;
}

int q_str_eq(const json_t *obj, const char *key, const char *s)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) && strlen(s) == json_string_length(v) &&
	       !memcmp(json_string_value(v), s, json_string_length(v));
}

int q_int_eq(const json_t *v, int64_t want)
{
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v) == want;
	if (json_is_real(v))
		return json_real_value(v) == (double)want &&
		       (double)want == json_real_value(v) &&
		       fabs(json_real_value(v)) < 9.2e18 &&
		       (int64_t)json_real_value(v) == want;
	return 0;
}

int64_t q_id(const json_t *obj, size_t k)
{
	const json_t *v = json_object_get(obj, "id");
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)k;
}

int q_select_profiles(struct qctx *q, size_t **idx, size_t *n)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t total = json_array_size(profiles), k;
	const json_t *pr;

	*n = 0;
	*idx = malloc((total ? total : 1) * sizeof **idx);
	if (!*idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(profiles, k, pr) {
		if (!json_is_object(pr))
			continue;
		if (!q_field_in(&q->workers, pr, "worker"))
			continue;
		if (q->p->has_rank &&
		    !q_int_eq(json_object_get(pr, "rank"), q->p->rank))
			continue;
		if (q->p->has_profile && q_id(pr, k) != q->p->profile)
			continue;
		(*idx)[(*n)++] = k;
	}
	return 0;
}

void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to)
{
	uint64_t off = (uint64_t)q->p->offset, lim = (uint64_t)q->p->limit;
	*from = off < total ? (size_t)off : total;
	*to = total - *from < lim ? total : *from + (size_t)lim;
}

int q_str_in(const struct qfilter *f, const char *s)
{
	if (!f->on)
		return 1;
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->v[k], s))
			return 1;
	return 0;
}

int q_in(const struct qfilter *f, const json_t *v)
{
	if (!f->on)
		return 1;
	if (!json_is_string(v))
		return 0;
	for (size_t k = 0; k < f->n; k++)
		if (strlen(f->v[k]) == json_string_length(v) &&
		    !memcmp(f->v[k], json_string_value(v), json_string_length(v)))
			return 1;
	return 0;
}

int q_field_in(const struct qfilter *f, const json_t *obj, const char *key)
{
	return !f->on || q_in(f, json_object_get(obj, key));
}

int q_any_in(const struct qfilter *f, const json_t *arr)
{
	size_t k;
	const json_t *v;
	if (!f->on)
		return 1;
	json_array_foreach(arr, k, v) {
		if (q_in(f, v))
			return 1;
	}
	return 0;
}

struct foreach {
	int (*fn)(void *ctx, const json_t *req, size_t index);
	void *ctx;
};

static int foreach_one(void *ctx, int64_t ordinal, const json_t *el)
{
	struct foreach *f = ctx;
	return f->fn(f->ctx, el, (size_t)ordinal);
}

int q_request_foreach(struct qctx *q,
                      int (*fn)(void *ctx, const json_t *req, size_t index),
                      void *ctx)
{
	struct foreach f = {fn, ctx};
	return dataset_foreach(q->ds, EVIDENCE_REQUESTS, foreach_one, &f, q->e);
}

const json_t *q_request_find(struct qctx *q, const char *id)
{
	json_t *r = NULL;

	if (dataset_find_request(q->ds, id, &r, q->e) || !r)
		return NULL;
	if (!q->held)
		q->held = json_array();
	if (!q->held || json_array_append_new(q->held, r))
		return NULL;
	return r;
}

void qi_begin(struct qitem *it, struct qctx *q)
{
	it->b = q->out;
	it->fields = &q->p->fields;
	it->n = 0;
	buf_putc(it->b, '{');
}

int qi_key(struct qitem *it, const char *key)
{
	if (it->fields->n) {
		size_t k;
		for (k = 0; k < it->fields->n; k++)
			if (!strcmp(it->fields->v[k], key))
				break;
		if (k == it->fields->n)
			return 0;
	}
	if (it->n++)
		buf_putc(it->b, ',');
	jsonout_cstr(it->b, key);
	buf_putc(it->b, ':');
	return 1;
}

void qi_members(struct qitem *it, const json_t *obj,
                const char *const *skip)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		int skipped = 0;
		for (const char *const *s = skip; s && *s; s++)
			if (!strcmp(*s, key))
				skipped = 1;
		if (!skipped && qi_key(it, key))
			jsonout_tree(it->b, v, 0);
	}
}

void qi_end(struct qitem *it)
{
	buf_putc(it->b, '}');
}

void q_emit_object(struct qctx *q, const json_t *obj)
{
	struct qitem it;
	if (!json_is_object(obj)) {
		jsonout_tree(q->out, obj, 0);
		return;
	}
	qi_begin(&it, q);
	qi_members(&it, obj, NULL);
	qi_end(&it);
}

/* A series rank as the filter compares it: the text Python would print. */
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

int q_keys_cmp(const void *a, const void *b, const struct qorder *o,
               q_key_value_fn value)
{
	for (size_t k = 0; o && k < o->n; k++) {
		struct qval x, y;
		int c;
		value(a, o->keys[k].name, &x);
		value(b, o->keys[k].name, &y);
		if ((c = qval_cmp(&x, &y, o->keys[k].desc)) != 0)
			return c;
	}
	return 0;
}

void q_topk_init(struct q_topk *t, size_t elem, size_t keep,
                 int (*cmp)(const void *, const void *, void *), void *ctx)
{
	memset(t, 0, sizeof *t);
	t->elem = elem;
	t->keep = keep;
	t->cmp = cmp;
	t->ctx = ctx;
}

static void *at(const struct q_topk *t, size_t i)
{
	return (char *)t->v + i * t->elem;
}

static void swap(struct q_topk *t, size_t i, size_t j)
{
	unsigned char *a = at(t, i), *b = at(t, j);
	for (size_t k = 0; k < t->elem; k++) {
		unsigned char c = a[k];
		a[k] = b[k];
		b[k] = c;
	}
}

static void sift_down(struct q_topk *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < t->n && t->cmp(at(t, l), at(t, m), t->ctx) > 0)
			m = l;
		if (r < t->n && t->cmp(at(t, r), at(t, m), t->ctx) > 0)
			m = r;
		if (m == i)
			return;
		swap(t, i, m);
		i = m;
	}
}

static void sift_up(struct q_topk *t, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (t->cmp(at(t, i), at(t, parent), t->ctx) <= 0)
			return;
		swap(t, i, parent);
		i = parent;
	}
}

int q_topk_offer(struct q_topk *t, const void *x)
{
	if (t->n < t->keep) {
		if (vec_reserve(&t->v, &t->cap, t->n + 1, t->elem)) {
			t->oom = 1;
			return 1;
		}
		memcpy(at(t, t->n), x, t->elem);
		sift_up(t, t->n++);
	} else if (t->n && t->cmp(x, t->v, t->ctx) < 0) {
		memcpy(t->v, x, t->elem);
		sift_down(t, 0);
	}
	return 0;
}

void q_topk_sort(struct q_topk *t)
{
	if (t->n > 1)
		qsort_r(t->v, t->n, t->elem, t->cmp, t->ctx);
}

void q_topk_free(struct q_topk *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
