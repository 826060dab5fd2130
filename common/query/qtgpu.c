/* qtgpu: the GPU source of the timeline (see qtgpu.h). */
#include "query/qtgpu.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/qkinds.h"
#include "query/qtline.h"

/* One series: a device of a profile. */
struct lane {
	int64_t device;
	int64_t *kernels;
	struct qsum *busy;
	int open;       /* a merged interval [cs, ce] is pending */
	double cs, ce;
};

struct tscan {
	const struct qbucket *bk;
	struct lane *lanes;
	size_t nlanes;
	const unsigned char *name_ok;
	size_t nnames;
	const struct query_params *p;
	size_t from; /* buckets before it came from the build-time bins */
};

/* Adds the pending union piece of l to its buckets. */
static void flush(const struct qbucket *bk, struct lane *l, size_t from)
{
	if (!l->open)
		return;
	for (size_t j = qbucket_first_overlap(bk, l->cs, l->ce);
	     j < bk->n && bk->b[j] <= l->ce; j++) {
		if (j < from)
			continue;
		double lo = l->cs > bk->b[j] ? l->cs : bk->b[j];
		double hi = l->ce < bk->b[j + 1] ? l->ce : bk->b[j + 1];
		qsum_add(&l->busy[j], hi - lo);
	}
	l->open = 0;
}

static int on_kernel(void *ctx, int64_t ordinal, const struct row_gpu *r,
                     int64_t nvtx_name)
{
	struct tscan *s = ctx;
	const struct qbucket *bk = s->bk;
	struct lane *l = NULL;
	(void)ordinal;
	(void)nvtx_name;
	if (r->kind != ROW_GPU_KERNEL || (r->nulls & (1u << ROW_GPU_DEVICE)))
		return 0;
	if (s->p->has_stream && ((r->nulls & (1u << ROW_GPU_STREAM)) ||
	                         r->v[ROW_GPU_STREAM] != s->p->stream))
		return 0;
	if (s->name_ok && (r->name < 0 || (uint64_t)r->name >= s->nnames ||
	                   !s->name_ok[r->name]))
		return 0;
	for (size_t k = 0; k < s->nlanes && !l; k++)
		if (s->lanes[k].device == r->v[ROW_GPU_DEVICE])
			l = &s->lanes[k];
	if (!l)
		return 0;
	for (size_t j = qbucket_first_overlap(bk, r->start, r->end);
	     j < bk->n && bk->b[j] <= r->end; j++)
		if (j >= s->from)
			l->kernels[j]++;
	if (l->open && r->start <= l->ce) {
		if (r->end > l->ce)
			l->ce = r->end;
		return 0;
	}
	flush(bk, l, s->from);
	l->open = 1;
	l->cs = r->start;
	l->ce = r->end;
	return 0;
}

/* A build-time bin into its lane's bucket. */
static int on_bin(void *ctx, int64_t device, int64_t bin, int64_t kernels,
                  const double *parts, size_t nparts)
{
	struct tscan *s = ctx;
	if (bin < 0 || (size_t)bin >= s->from)
		return 0;
	for (size_t k = 0; k < s->nlanes; k++)
		if (s->lanes[k].device == device) {
			s->lanes[k].kernels[bin] = kernels;
			for (size_t i = 0; i < nparts; i++)
				qsum_add(&s->lanes[k].busy[bin], parts[i]);
		}
	return 0;
}

/* Whole run at 1-s buckets without kernel filters: every bucket but the
 * last comes from the build-time bins (s->from set to the last bucket);
 * s->from stays 0 when that does not apply. */
static int from_bins(struct qctx *q, struct tscan *s, int64_t profile)
{
	int have = 0, rc;
	s->from = 0;
	if (!q_whole_run(q) || q->p->bucket != 1.0 || q->p->has_stream ||
	    (q->names.on && !(q->names.n == 1 && !*q->names.v[0])) ||
	    s->bk->n < 2)
		return 0;
	s->from = s->bk->n - 1;
	rc = dataset_gpu_sum_bins(q->ds, profile, q->duration,
	                          (int64_t)s->from, &have, on_bin, s, q->e);
	if (rc || !have) {
		for (size_t k = 0; k < s->nlanes; k++) {
			memset(s->lanes[k].kernels, 0,
			       s->bk->n * sizeof *s->lanes[k].kernels);
			qtline_free_sums(s->lanes[k].busy, s->bk->n);
			s->lanes[k].busy = qtline_new_sums(s->bk->n);
			if (!s->lanes[k].busy && !rc)
				rc = err_set(q->e, ERR_NOMEM, "out of memory");
		}
		s->from = 0;
	}
	return rc;
}

static void lanes_free(struct tscan *s)
{
	for (size_t k = 0; k < s->nlanes; k++) {
		free(s->lanes[k].kernels);
		qtline_free_sums(s->lanes[k].busy, s->bk->n);
	}
	free(s->lanes);
	s->lanes = NULL;
	s->nlanes = 0;
}

/* The selected devices of profile pr (its gpu.devices, --device). */
static int lanes_of(struct qctx *q, struct tscan *s, const json_t *pr)
{
	const json_t *devs = json_object_get(json_object_get(pr, "gpu"),
	                                     "devices");
	size_t k;
	const json_t *d;
	s->lanes = calloc(json_array_size(devs) + 1, sizeof *s->lanes);
	if (!s->lanes)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(devs, k, d) {
		const json_t *id = json_object_get(d, "id");
		if (!json_is_integer(id) ||
		    (q->p->has_device && json_integer_value(id) != q->p->device))
			continue;
		struct lane *l = &s->lanes[s->nlanes++];
		l->device = json_integer_value(id);
		l->kernels = calloc(s->bk->n, sizeof *l->kernels);
		l->busy = qtline_new_sums(s->bk->n);
		if (!l->kernels || !l->busy)
			return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

/* The number of series (profile, device) the selection has. */
static size_t count_series(struct qctx *q, const size_t *idx, size_t n)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t total = 0, k;
	const json_t *d;
	for (size_t i = 0; i < n; i++) {
		const json_t *devs = json_object_get(json_object_get(
			json_array_get(profiles, idx[i]), "gpu"), "devices");
		json_array_foreach(devs, k, d) {
			const json_t *id = json_object_get(d, "id");
			if (json_is_integer(id) && (!q->p->has_device ||
			    json_integer_value(id) == q->p->device))
				total++;
		}
	}
	return total;
}

int qtgpu_series(struct qctx *q, const struct qbucket *bk, size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct row_window w = {q->start, q->end, 0};
	size_t *idx = NULL, n = 0, from, to, pos = 0, nn = 0;
	struct q_needle *nd = NULL;
	int rc = q_select_profiles(q, &idx, &n), first = 1;

	if (!rc)
		rc = q_name_needles(q, &nd, &nn);
	if (!rc)
		qtline_series_head(q, count_series(q, idx, n), total);
	q_page(q, *total, &from, &to);
	for (size_t i = 0; !rc && i < n && pos < to; i++) {
		const json_t *pr = json_array_get(profiles, idx[i]);
		struct tscan s;
		unsigned char *ok = NULL;
		memset(&s, 0, sizeof s);
		s.bk = bk;
		s.p = q->p;
		if ((rc = lanes_of(q, &s, pr)) != 0) {
			lanes_free(&s);
			break;
		}
		if (pos + s.nlanes <= from) {
			pos += s.nlanes;
			lanes_free(&s);
			continue;
		}
		const json_t *names = json_object_get(pr, "gpu_names");
		if (nd && !(ok = q_match_names(names, nd, nn)))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		s.name_ok = ok;
		s.nnames = json_array_size(names);
		double maxd = json_number_value(json_object_get(
			json_object_get(pr, "gpu"), "max_duration"));
		struct row_window wi = w;
		if (!rc && s.nlanes && (rc = from_bins(q, &s, (int64_t)idx[i])) ==
		    0 && s.from)
			wi.start = bk->b[s.from];
		if (!rc && s.nlanes)
			rc = dataset_gpu_rows(q->ds, (int64_t)idx[i], &wi, maxd, 0,
			                      on_kernel, &s, q->e);
		for (size_t k = 0; !rc && k < s.nlanes; k++, pos++) {
			struct lane *l = &s.lanes[k];
			struct qitem it;
			flush(bk, l, s.from);
			if (pos < from || pos >= to)
				continue;
			if (qtline_sums_failed(l->busy, bk->n)) {
				rc = err_set(q->e, ERR_NOMEM, "out of memory");
				break;
			}
			if (!first)
				buf_putc(q->out, ',');
			first = 0;
			buf_puts(q->out, "{\"key\":{\"profile\":");
			jsonout_int(q->out, q_id(pr, idx[i]));
			buf_puts(q->out, ",\"device\":");
			jsonout_int(q->out, l->device);
			buf_putc(q->out, '}');
			qtline_series_open(q, &it);
			qtline_int_array(&it, "kernels", l->kernels, bk->n);
			qtline_sum_array(&it, "busy", l->busy, bk->n);
			qtline_series_close(&it);
		}
		free(ok);
		lanes_free(&s);
	}
	q_name_needles_free(nd, nn);
	free(idx);
	return rc;
}
