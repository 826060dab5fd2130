/* qcoll: listing catalog elements (see qcoll.h). */
#include "query/qcoll.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "query/qlist.h"

/* Collects arr's elements for which keep() is true (*el malloc'd). */
static int collect(struct qctx *q, const json_t *arr, qcoll_keep_fn keep,
                   void *arg, const json_t ***el, size_t *n)
{
	size_t total = json_array_size(arr), k;
	const json_t *v;

	*n = 0;
	*el = malloc((total ? total : 1) * sizeof **el);
	if (!*el)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(arr, k, v) {
		if (keep(q, v, arg))
			(*el)[(*n)++] = v;
	}
	return 0;
}

/* Writes the list head, the page of el[0..n) (sorted) through emit and
 * the list's tail (q_list_tail); the caller closes the list. */
void qcoll_emit_page(struct qctx *q, const json_t *const *el, size_t n,
                     qcoll_emit_fn emit)
{
	size_t from, to;

	q_page(q, n, &from, &to);
	q_list_head(q, n);
	for (size_t k = from; k < to; k++) {
		if (k > from)
			buf_putc(q->out, ',');
		emit(q, el[k]);
	}
	q_list_tail(q);
}

void qcoll_emit_object(struct qctx *q, const json_t *el)
{
	q_emit_object(q, el);
}

/* Sorts el[0..n) by the query's sort and writes the whole list; frees el
 * (malloc'd) either way. */
int qcoll_sorted(struct qctx *q, const json_t **el, size_t n,
                 qcoll_emit_fn emit)
{
	int rc = qorder_sort_objects(&q->order, q->kind, el, n, q->e);
	if (!rc) {
		qcoll_emit_page(q, el, n, emit);
		q_list_close(q, n);
	}
	free(el);
	return rc;
}

/* Emits a plain list: matching elements of arr, whole, in the sort's
 * order. */
int qcoll_plain(struct qctx *q, const json_t *arr, qcoll_keep_fn keep,
                void *arg)
{
	const json_t **el;
	size_t n;
	int rc = collect(q, arr, keep, arg, &el, &n);
	if (rc) {
		free(el);
		return rc;
	}
	return qcoll_sorted(q, el, n, qcoll_emit_object);
}

/* ---- catalog collections (requests, sessions, server_spans,
 * iterations): the backend's own selection when it can answer exactly
 * (dataset_select), else every element through the filters here ---- */

static int keep_one(void *ctx, int64_t ordinal, const json_t *v)
{
	struct qcoll_kept *k = ctx;
	(void)ordinal;
	if (!k->keep(k->q, v, k->arg))
		return 0;
	if (vec_reserve(&k->el, &k->cap, k->n + 1, sizeof *k->el))
		return err_set(k->q->e, ERR_NOMEM, "out of memory");
	k->el[k->n++] = json_incref((json_t *)v);
	return 0;
}

void qcoll_kept_free(struct qcoll_kept *k)
{
	for (size_t i = 0; i < k->n; i++)
		json_decref((json_t *)k->el[i]);
	free(k->el);
}

/* Collects collection c's elements for which keep() is true, sorted by
 * the query's sort (references held: kept_free). */
int qcoll_gather(struct qctx *q, enum evidence_collection c,
                 qcoll_keep_fn keep, void *arg, struct qcoll_kept *k)
{
	int rc;
	memset(k, 0, sizeof *k);
	k->q = q;
	k->keep = keep;
	k->arg = arg;
	rc = dataset_foreach(q->ds, c, keep_one, k, q->e);
	if (!rc)
		rc = qorder_sort_objects(&q->order, q->kind, k->el, k->n, q->e);
	return rc;
}

/* A page written by the backend's selection. */
struct sel_page {
	struct qctx *q;
	qcoll_emit_fn emit;
	int n;
};

static int emit_one(void *ctx, int64_t ordinal, const json_t *el)
{
	struct sel_page *p = ctx;
	(void)ordinal;
	if (p->n++)
		buf_putc(p->q->out, ',');
	p->emit(p->q, el);
	return 0;
}

struct store_strs qcoll_strs(const struct qfilter *f)
{
	struct store_strs s = {f->v, f->n, f->on};
	return s;
}

/* The selection of c answered by the backend: the list up to its tail
 * (q_list_tail), *total set; DATASET_FALLBACK when it cannot. */
int qcoll_backend(struct qctx *q, enum evidence_collection c,
                  struct store_select *sel, int64_t *unaligned,
                  qcoll_emit_fn emit, size_t *total_out)
{
	struct sel_page pg = {q, emit, 0};
	struct store_sort_key keys[16];
	size_t mark = q->out->len, n;
	int64_t total = 0;
	char *items;
	int rc;

	if (q->order.n > 16)
		return DATASET_FALLBACK;
	for (size_t i = 0; i < q->order.n; i++) {
		keys[i].key = q->order.keys[i].name;
		keys[i].desc = q->order.keys[i].desc;
	}
	sel->sort = keys;
	sel->nsort = q->order.n;
	sel->start = q->start;
	sel->end = q->end;
	sel->offset = q->p->offset;
	sel->limit = q->p->limit;
	/* the total is known once the page is written: write the items, then
	 * put the head before them */
	rc = dataset_select(q->ds, c, sel, &total, unaligned, emit_one, &pg, q->e);
	if (rc) {
		q->out->len = mark;
		return rc;
	}
	n = q->out->len - mark;
	items = malloc(n + 1);
	if (!items)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	if (n)
		memcpy(items, q->out->data + mark, n);
	q->out->len = mark;
	q_list_head(q, (size_t)total);
	buf_append(q->out, items, n);
	free(items);
	q_list_tail(q);
	*total_out = (size_t)total;
	return 0;
}

/* A plain list of a collection: the backend's, else keep() over every
 * element. */
int qcoll_list(struct qctx *q, enum evidence_collection c,
               struct store_select *sel, qcoll_keep_fn keep)
{
	struct qcoll_kept k;
	size_t total;
	int rc = qcoll_backend(q, c, sel, NULL, qcoll_emit_object, &total);

	if (rc != DATASET_FALLBACK) {
		if (!rc)
			q_list_close(q, total);
		return rc;
	}
	rc = qcoll_gather(q, c, keep, NULL, &k);
	if (rc) {
		qcoll_kept_free(&k);
		return rc;
	}
	qcoll_emit_page(q, k.el, k.n, qcoll_emit_object);
	q_list_close(q, k.n);
	qcoll_kept_free(&k);
	return 0;
}
