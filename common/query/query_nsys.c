/* query_nsys: NVTX ranges overlapping the window, ordered by (start,
 * profile, source_row), paged (doc/query-semantics.md "nsys"). */
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qkinds.h"
#include "query/qrange.h"
#include "base/text.h"

/* One match; the page's rows are re-read by ordinal at the end. */
struct hit {
	double start, end;
	int64_t profile; /* the profile's id */
	int64_t source_row;
	int64_t ordinal;
	size_t pindex;   /* index into catalog.profiles */
	const json_t *name; /* its dictionary name (sorting by name) */
};

static void hit_value(const void *hit, const char *key, struct qval *v)
{
	const struct hit *h = hit;
	if (!strcmp(key, "start"))
		qval_number(h->start, v);
	else if (!strcmp(key, "end"))
		qval_number(h->end, v);
	else if (!strcmp(key, "duration"))
		qval_number(h->end - h->start, v);
	else if (!strcmp(key, "profile"))
		qval_int(h->profile, v);
	else
		qval_of_json(h->name, v);
}

/* The sort's keys first (when given), then the default order. */
static int hit_cmp(const struct hit *a, const struct hit *b,
                   const struct qorder *o)
{
	int c = q_keys_cmp(a, b, o, hit_value);
	if (c)
		return c;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->profile != b->profile)
		return a->profile < b->profile ? -1 : 1;
	if (a->source_row != b->source_row)
		return a->source_row < b->source_row ? -1 : 1;
	if (a->pindex != b->pindex)
		return a->pindex < b->pindex ? -1 : 1;
	return a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
}

static int hit_qsort(const void *a, const void *b, void *o)
{
	return hit_cmp(a, b, o);
}

/* The keep smallest hits (top.v: struct hit). */
struct scan {
	struct q_topk top;
	size_t total;
	/* current profile */
	int64_t profile;
	size_t pindex;
	const unsigned char *name_ok; /* NULL = no name filter */
	size_t nnames;
	const json_t *names;          /* the profile's dictionary */
	int stopped; /* on_event_ordered stopped the walk */
};

/* The deepest page read in start order (deeper pages scan the window). */
#define ORDERED_KEEP_MAX 10000

/* Keeps the hit if it is among the keep smallest so far. */
static int keep_hit(struct scan *s, int64_t ordinal,
                    const struct row_event *row)
{
	struct hit h;

	h.start = row->start;
	h.end = row->end;
	h.name = row->name >= 0 ? json_array_get(s->names, (size_t)row->name)
	                        : NULL;
	h.profile = s->profile;
	h.source_row = row->source_row;
	h.ordinal = ordinal;
	h.pindex = s->pindex;
	return q_topk_offer(&s->top, &h);
}

static int on_event(void *ctx, int64_t ordinal,
                    const struct row_event *row)
{
	struct scan *s = ctx;

	if (s->name_ok &&
	    (row->name < 0 || (uint64_t)row->name >= s->nnames ||
	     !s->name_ok[row->name]))
		return 0;
	s->total++;
	if (!s->top.keep)
		return 0;
	return keep_hit(s, ordinal, row);
}

/* Ranges in start order: once the page is full, a range starting after
 * the last kept one (and every range after it) cannot enter the page. */
static int on_event_ordered(void *ctx, int64_t ordinal,
                            const struct row_event *row)
{
	struct scan *s = ctx;

	if (s->top.n == s->top.keep &&
	    row->start > ((const struct hit *)s->top.v)[0].start) {
		s->stopped = 1;
		return 1;
	}
	return keep_hit(s, ordinal, row);
}

/* Most pages ask for a few ranges in the default order: read each
 * profile's ranges in start order and stop after the page, counting the
 * whole run from the build-time summary.  *done = 0 when that does not
 * apply (a name filter, a sort, a window other than the whole run, a deep
 * page, no summaries). */
static int ordered_page(struct qctx *q, struct scan *s, const size_t *idx,
                        size_t n, int filtered, const struct row_window *w,
                        int *done)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t total = 0;
	int rc = 0, have = 1;

	*done = 0;
	if (filtered || qrange_on(q) || q->order.n || !q_whole_run(q) ||
	    s->top.keep > ORDERED_KEEP_MAX)
		return 0;
	for (size_t k = 0; k < n && have && !rc; k++) {
		int64_t c = 0;
		rc = dataset_run_events(q->ds, (int64_t)idx[k], &have, &c, q->e);
		total += (size_t)c;
	}
	if (rc || !have)
		return rc;
	for (size_t k = 0; k < n && s->top.keep && !rc; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		s->names = json_object_get(pr, "names");
		s->profile = q_id(pr, idx[k]);
		s->pindex = idx[k];
		s->stopped = 0;
		rc = dataset_events_by_start(q->ds, (int64_t)idx[k], w, &have,
		                             on_event_ordered, s, q->e);
		if (rc == 1 && s->stopped)
			rc = 0;
		if (s->top.oom)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		if (!rc && !have) /* cannot happen once the counts were there */
			return err_set(q->e, ERR_DATA, "the summaries vanished");
	}
	s->total = total;
	*done = !rc;
	return rc;
}

struct emit {
	struct qctx *q;
	const json_t *pr;
	int64_t pindex;
	int64_t profile;
	int64_t depth; /* qrange_depths' */
	int done;
};

/* pid/tid of a decimal global thread id of any length and sign:
 * (g >> 24) & 0xFFFFFF and g & 0xFFFFFF with Python's two's-complement
 * semantics, which need only g mod 2^48.  0 when the text is not
 * decimal. */
static int gtid_parts(const char *s, size_t n, int64_t *pid, int64_t *tid)
{
	const uint64_t mask = ((uint64_t)1 << 48) - 1;
	uint64_t m = 0;
	size_t k = 0;
	int neg = 0;

	if (n && s[0] == '-') {
		neg = 1;
		k = 1;
	}
	if (k == n)
		return 0;
	for (; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return 0;
		m = (m * 10 + (uint64_t)(s[k] - '0')) & mask;
	}
	if (neg)
		m = (mask + 1 - m) & mask;
	*pid = (int64_t)(m >> 24);
	*tid = (int64_t)(m & 0xFFFFFF);
	return 1;
}

static void put_member(struct buf *b, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	jsonout_tree(b, v ? v : json_null(), 0);
}

/* A range's projected GPU work (doc/nsight-import.md "GPU activity"),
 * on profiles that have GPU rows. */
static int put_gpu(struct emit *em, struct qitem *it,
                   const struct row_event *row)
{
	struct buf *b = em->q->out;
	struct store_gpu_span sp;
	int want = 0;
	for (size_t k = 0; k < em->q->p->fields.n; k++)
		if (!strncmp(em->q->p->fields.v[k], "gpu_", 4) ||
		    !strcmp(em->q->p->fields.v[k], "kernels"))
			want = 1;
	memset(&sp, 0, sizeof sp);
	if ((want || !em->q->p->fields.n) &&
	    dataset_gpu_projected(em->q->ds, em->pindex, row->tid, row->tid_len,
	                          row->start, row->end, &sp, em->q->e) != 0)
		return -1;
	if (qi_key(it, "gpu_start")) {
		if (sp.count)
			jsonout_real(b, sp.start);
		else
			buf_puts(b, "null");
	}
	if (qi_key(it, "gpu_end")) {
		if (sp.count)
			jsonout_real(b, sp.end);
		else
			buf_puts(b, "null");
	}
	if (qi_key(it, "gpu_busy")) {
		if (sp.count)
			jsonout_real(b, sp.busy);
		else
			buf_puts(b, "null");
	}
	if (qi_key(it, "kernels"))
		jsonout_int(b, sp.count);
	return 0;
}

static int emit_event(void *ctx, int64_t ordinal,
                      const struct row_event *row)
{
	struct emit *em = ctx;
	struct buf *b = em->q->out;
	const json_t *names = json_object_get(em->pr, "names");
	const json_t *defs = json_object_get(em->pr, "name_definitions");
	const json_t *name = NULL, *def = NULL;
	int64_t pid, tid;
	int parts = gtid_parts(row->tid, row->tid_len, &pid, &tid);
	struct qitem it;

	if (row->name >= 0) {
		name = json_array_get(names, (size_t)row->name);
		if (json_array_size(defs))
			def = json_array_get(defs, (size_t)row->name);
	}
	qi_begin(&it, em->q);
	if (qi_key(&it, "profile"))
		jsonout_int(b, em->profile);
	if (qi_key(&it, "worker"))
		put_member(b, em->pr, "worker");
	if (qi_key(&it, "rank"))
		put_member(b, em->pr, "rank");
	if (qi_key(&it, "start"))
		jsonout_real(b, row->start);
	if (qi_key(&it, "end"))
		jsonout_real(b, row->end);
	if (qi_key(&it, "name"))
		jsonout_tree(b, name ? name : json_null(), 0);
	if (qi_key(&it, "global_tid"))
		jsonout_str(b, row->tid, row->tid_len);
	if (qi_key(&it, "pid")) {
		if (parts)
			jsonout_int(b, pid);
		else
			buf_puts(b, "null");
	}
	if (qi_key(&it, "tid")) {
		if (parts)
			jsonout_int(b, tid);
		else
			buf_puts(b, "null");
	}
	(void)ordinal;
	if (qi_key(&it, "depth"))
		jsonout_int(b, em->depth);
	if (qi_key(&it, "definition"))
		jsonout_tree(b, def ? def : json_null(), 0);
	if (qi_key(&it, "rowid"))
		jsonout_int(b, row->source_row);
	if (qi_key(&it, "evidence_source"))
		put_member(b, em->pr, "evidence_source");
	if (json_is_object(json_object_get(em->pr, "gpu")) &&
	    put_gpu(em, &it, row) != 0)
		return -1;
	qi_end(&it);
	em->done = 1;
	return 0;
}

/* Whether --fields keeps key (no --fields: every key). */
static int want_key(const struct qlist *f, const char *key)
{
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->v[k], key))
			return 1;
	return !f->n;
}

static int grab_row(void *ctx, int64_t ordinal, const struct row_event *row)
{
	struct qrange_row *r = ctx;
	r->ordinal = ordinal;
	r->start = row->start;
	r->end = row->end;
	r->tid_len = row->tid_len;
	r->tid = malloc(row->tid_len + 1);
	if (!r->tid)
		return -1;
	memcpy(r->tid, row->tid, row->tid_len);
	return 0;
}

static void page_rows_free(struct qrange_row *rows, size_t n)
{
	for (size_t k = 0; rows && k < n; k++)
		free(rows[k].tid);
	free(rows);
}

/* The depths of the page heap[from..to) (*out malloc'd, one per row). */
static int page_depths(struct qctx *q, const struct hit *heap, size_t from,
                       size_t to, struct qrange_row **out)
{
	struct qrange_row *rows = calloc(to - from, sizeof *rows);
	int rc = 0;

	*out = rows;
	if (!rows)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = from; k < to && !rc; k++) {
		struct qrange_row *r = &rows[k - from];
		r->pindex = (int64_t)heap[k].pindex;
		r->ordinal = -1;
		rc = dataset_event_at(q->ds, r->pindex, heap[k].ordinal, grab_row,
		                      r, q->e);
		if (rc == -1 || (!rc && !r->tid))
			rc = err_set(q->e, rc == -1 ? ERR_NOMEM : ERR_DATA,
			             rc == -1 ? "out of memory"
			                      : "An event vanished while reading");
	}
	if (!rc)
		rc = qrange_depths(q, rows, to - from);
	return rc;
}

unsigned char *q_match_names(const json_t *names, const struct q_needle *nd,
                             size_t nn)
{
	size_t n = json_array_size(names), k;
	unsigned char *ok = calloc(n ? n : 1, 1);
	const json_t *v;

	if (!ok)
		return NULL;
	json_array_foreach(names, k, v) {
		for (size_t i = 0; i < nn && !ok[k]; i++)
			ok[k] = json_is_string(v) &&
			        text_contains(json_string_value(v),
			                      json_string_length(v), nd[i].text,
			                      nd[i].len);
	}
	return ok;
}

int q_name_needles(struct qctx *q, struct q_needle **out, size_t *count)
{
	struct q_needle *nd = NULL;
	size_t nn = 0;

	*out = NULL;
	*count = 0;
	if (!q->names.on || (q->names.n == 1 && !*q->names.v[0]))
		return 0;
	nd = calloc(q->names.n, sizeof *nd);
	for (; nd && nn < q->names.n; nn++) {
		const char *v = q->names.v[nn];
		if (!(nd[nn].text = text_lower(v, strlen(v), &nd[nn].len)))
			break;
	}
	if (!nd || nn < q->names.n) {
		q_name_needles_free(nd, nn);
		return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	*out = nd;
	*count = nn;
	return 0;
}

void q_name_needles_free(struct q_needle *nd, size_t nn)
{
	for (size_t k = 0; nd && k < nn; k++)
		free(nd[k].text);
	free(nd);
}

int query_nsys(struct qctx *q)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	/* short windows use the durations lower bound on event_window; a
	 * window over at least half the run reads every row anyway */
	struct row_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	struct scan s;
	struct q_needle *nd = NULL;
	size_t nn = 0, *idx = NULL, n, from, to;
	struct qrange_row *rows = NULL;
	int partial = 0, done = 0, rc;

	memset(&s, 0, sizeof s);
	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	rc = q_select_profiles(q, &idx, &n);
	if (rc)
		return rc;
	rc = q_name_needles(q, &nd, &nn);
	q_topk_init(&s.top, sizeof(struct hit), q->p->limit == 0 ? 0 :
	            (size_t)q->p->offset + (size_t)q->p->limit, hit_qsort,
	            (void *)&q->order);
	if (!rc)
		rc = ordered_page(q, &s, idx, n, nd != NULL, &w, &done);
	for (size_t k = 0; k < n && !rc; k++)
		if (json_is_true(json_object_get(json_array_get(profiles, idx[k]),
		                                 "truncated")))
			partial = 1;
	for (size_t k = 0; k < n && !rc && !done; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		unsigned char *name_ok = NULL;
		s.names = json_object_get(pr, "names");
		if (nd) {
			const json_t *names = s.names;
			name_ok = q_match_names(names, nd, nn);
			if (!name_ok) {
				rc = err_set(q->e, ERR_NOMEM, "out of memory");
				break;
			}
			s.nnames = json_array_size(names);
		}
		s.name_ok = name_ok;
		s.profile = q_id(pr, idx[k]);
		s.pindex = idx[k];
		rc = qrange_events(q, (int64_t)idx[k], &w, on_event, &s);
		free(name_ok);
		if (s.top.oom)
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
	}
	q_name_needles_free(nd, nn);
	free(idx);
	if (rc) {
		q_topk_free(&s.top);
		return rc;
	}
	q_topk_sort(&s.top);
	const struct hit *heap = s.top.v;
	q_page(q, s.total, &from, &to);
	if (to > s.top.n)
		to = s.top.n;
	if (from < to && want_key(&q->p->fields, "depth"))
		rc = page_depths(q, heap, from, to, &rows);
	if (rc) {
		q_topk_free(&s.top);
		return rc;
	}
	q_list_head(q, s.total);
	for (size_t k = from; k < to && !rc; k++) {
		struct emit em = {q, json_array_get(profiles, heap[k].pindex),
		                  (int64_t)heap[k].pindex, heap[k].profile, rows ? rows[k - from].depth : 0,
		                  0};
		if (k > from)
			buf_putc(q->out, ',');
		rc = dataset_event_at(q->ds, (int64_t)heap[k].pindex,
		                      heap[k].ordinal, emit_event, &em, q->e);
		if (rc == -1 && q->e->code)
			rc = q->e->code;
		if (!rc && !em.done)
			rc = err_set(q->e, ERR_DATA,
			             "Event %lld of profile %lld vanished while "
			             "reading",
			             (long long)heap[k].ordinal,
			             (long long)heap[k].profile);
	}
	q_topk_free(&s.top);
	page_rows_free(rows, to - from);
	if (rc)
		return rc;
	q_list_tail(q);
	buf_puts(q->out, ",\"attribution\":\"Shared worker/rank activity; "
	                 "overlap does not establish request ownership.\","
	                 "\"partial\":");
	buf_puts(q->out, partial ? "true" : "false");
	q_list_close(q, s.total);
	return 0;
}
