/* qgroup: group keys, NVTX group accumulators and group order (see
 * qgroup.h). */
#include "query/qgroup.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/vec.h"

void qkeys_init(struct qkeys *k)
{
	memset(k, 0, sizeof *k);
	strdict_init(&k->strs);
	k->null_group = -1;
}

void qkeys_free(struct qkeys *k)
{
	strdict_free(&k->strs);
	free(k->keys);
	qkeys_init(k);
}

static int64_t add_key(struct qkeys *k, struct qkey key)
{
	if (vec_reserve(&k->keys, &k->cap, (size_t)k->count + 1,
	                sizeof *k->keys))
		return -1;
	k->keys[k->count] = key;
	return k->count++;
}

/* Strings and integers share one dictionary: a string key is its bytes
 * plus 's', an integer its 8 bytes plus 'i', so they never collide. */
static int64_t intern(struct qkeys *k, const char *bytes, size_t len,
                      char tag, struct qkey key)
{
	char small[64];
	char *buf = len + 1 <= sizeof small ? small : malloc(len + 1);
	int64_t idx, group;
	int added = 0;

	if (!buf)
		return -1;
	memcpy(buf, bytes, len);
	buf[len] = tag;
	idx = strdict_intern(&k->strs, buf, len + 1, &added);
	if (buf != small)
		free(buf);
	if (idx < 0)
		return -1;
	if (!added)
		return k->strs.entries[idx].value;
	if (key.kind == QKEY_STR)
		key.s = k->strs.entries[idx].key; /* stable copy */
	group = add_key(k, key);
	if (group < 0)
		return -1;
	k->strs.entries[idx].value = group;
	return group;
}

int64_t qkeys_str(struct qkeys *k, const char *s, size_t len)
{
	struct qkey key = {QKEY_STR, NULL, len, 0};
	return intern(k, s, len, 's', key);
}

int64_t qkeys_find_str(const struct qkeys *k, const char *s, size_t len)
{
	char small[64];
	char *buf = len + 1 <= sizeof small ? small : malloc(len + 1);
	int64_t idx = -1;

	if (!buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 's';
	if (!strdict_get(&k->strs, buf, len + 1, &idx))
		idx = -1;
	if (buf != small)
		free(buf);
	return idx;
}

int64_t qkeys_int(struct qkeys *k, int64_t i)
{
	struct qkey key = {QKEY_INT, NULL, 0, i};
	return intern(k, (const char *)&i, sizeof i, 'i', key);
}

int64_t qkeys_null(struct qkeys *k)
{
	if (k->null_group < 0) {
		struct qkey key = {QKEY_NULL, NULL, 0, 0};
		k->null_group = add_key(k, key);
	}
	return k->null_group;
}

int qkey_cmp(const struct qkey *a, const struct qkey *b)
{
	if (a->kind == QKEY_NULL || b->kind == QKEY_NULL)
		return (a->kind == QKEY_NULL) - (b->kind == QKEY_NULL);
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == QKEY_INT)
		return a->i < b->i ? -1 : a->i > b->i;
	{
		size_t n = a->len < b->len ? a->len : b->len;
		int c = memcmp(a->s, b->s, n);
		if (c)
			return c < 0 ? -1 : 1;
		return a->len < b->len ? -1 : a->len > b->len;
	}
}

void qkey_emit(struct buf *b, const struct qkey *k)
{
	if (k->kind == QKEY_STR)
		jsonout_str(b, k->s, k->len);
	else if (k->kind == QKEY_INT)
		jsonout_int(b, k->i);
	else
		buf_puts(b, "null");
}

/* ---- NVTX groups ---- */

void qnvtx_init(struct qnvtx *g)
{
	memset(g, 0, sizeof *g);
}

void qnvtx_free(struct qnvtx *g)
{
	qsum_free(&g->duration);
	qsum_free(&g->clipped);
}

void qnvtx_add(struct qnvtx *g, double start, double end, double wstart,
               double wend)
{
	double d = end - start;
	double a = start > wstart ? start : wstart;
	double b = end < wend ? end : wend;

	if (!g->count || d > g->max)
		g->max = d;
	g->count++;
	qsum_add(&g->duration, d);
	qsum_add(&g->clipped, b - a);
}

void qnvtx_merge(struct qnvtx *g, const struct qnvtx *o)
{
	if (!o->count)
		return;
	if (!g->count || o->max > g->max)
		g->max = o->max;
	g->count += o->count;
	qsum_merge(&g->duration, &o->duration);
	qsum_merge(&g->clipped, &o->clipped);
}

/* ---- order ---- */

struct order_ctx {
	const struct qkey *keys;
	const struct num *vals;
	size_t nvals;
	const struct qgroup_by *def, *sort;
	size_t ndef, nsort;
};

static int by_one(const struct order_ctx *c, size_t x, size_t y,
                  const struct qgroup_by *k)
{
	int r;
	if (k->val == QGROUP_KEY) {
		const struct qkey *a = &c->keys[x], *b = &c->keys[y];
		if (a->kind == QKEY_NULL || b->kind == QKEY_NULL)
			return (a->kind == QKEY_NULL) - (b->kind == QKEY_NULL);
		r = qkey_cmp(a, b);
	} else {
		const struct num *a = &c->vals[x * c->nvals + (size_t)k->val];
		const struct num *b = &c->vals[y * c->nvals + (size_t)k->val];
		if (a->kind == NUM_NULL || b->kind == NUM_NULL)
			return (a->kind == NUM_NULL) - (b->kind == NUM_NULL);
		r = num_cmp(a, b);
	}
	return k->desc ? -r : r;
}

static int order_cmp(const void *pa, const void *pb, void *pc)
{
	const struct order_ctx *c = pc;
	size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
	int r;

	for (size_t k = 0; k < c->nsort; k++)
		if ((r = by_one(c, x, y, &c->sort[k])))
			return r;
	for (size_t k = 0; k < c->ndef; k++)
		if ((r = by_one(c, x, y, &c->def[k])))
			return r;
	return x < y ? -1 : x > y;
}

int qgroup_order(const struct qkey *keys, const struct num *vals,
                 size_t nvals, size_t n, const struct qgroup_sort *by,
                 size_t *order)
{
	struct order_ctx c = {keys, vals, nvals, by->def, by->sort, by->ndef,
	                      by->nsort};
	for (size_t k = 0; k < n; k++)
		order[k] = k;
	if (n > 1)
		qsort_r(order, n, sizeof *order, order_cmp, &c);
	return 0;
}
