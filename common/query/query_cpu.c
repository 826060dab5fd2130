/* query_cpu: inclusive CPU hotspots over the samples in the window, or
 * with --self the leaf frames' (doc/query-semantics.md "cpu"). */
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/vec.h"
#include "query/qkinds.h"

struct sym {
	const char *name;
	size_t len;
	int64_t samples;
};

static int cmp_name(const struct sym *a, const struct sym *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int sym_by_name(const void *a, const void *b)
{
	return cmp_name(a, b);
}

static int sym_by_rank(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return cmp_name(x, y);
}

struct counts {
	int64_t *per_stack; /* samples per stack index */
	size_t nstacks;
	int64_t total;
};

static int on_sample(void *ctx, int64_t ordinal,
                     const struct row_sample *row)
{
	struct counts *c = ctx;
	(void)ordinal;
	c->total++;
	if (row->stack >= 0 && (uint64_t)row->stack < c->nstacks)
		c->per_stack[row->stack]++;
	return 0;
}

/* A stack's whole-run samples from the build-time summary; -1 for a
 * stack the profile does not have. */
static int on_stack(void *ctx, int64_t stack, int64_t samples)
{
	struct counts *c = ctx;
	if (stack < 0 || (uint64_t)stack >= c->nstacks)
		return -1;
	c->per_stack[stack] += samples;
	return 0;
}

/* Adds the profile's inclusive symbol counts to *syms (self: only the
 * leaf frame, element 0 of each stack). */
static int add_profile(const json_t *cpu, const struct counts *c, int self,
                       struct sym **syms, size_t *nsyms, size_t *cap)
{
	const json_t *names = json_object_get(cpu, "names");
	const json_t *stacks = json_object_get(cpu, "stacks");
	size_t nn = json_array_size(names);
	int64_t *by_name = calloc(nn ? nn : 1, sizeof *by_name);
	size_t *stamp = calloc(nn ? nn : 1, sizeof *stamp);
	struct sym *canon = malloc((nn ? nn : 1) * sizeof *canon);
	size_t *canon_of = malloc((nn ? nn : 1) * sizeof *canon_of);
	int rc = -1;

	if (!by_name || !stamp || !canon || !canon_of)
		goto out;
	/* canon_of[k]: the first dictionary index holding the same string,
	 * so one symbol counts once per stack even when repeated. */
	for (size_t k = 0; k < nn; k++) {
		const json_t *v = json_array_get(names, k);
		canon[k].name = json_is_string(v) ? json_string_value(v) : "";
		canon[k].len = json_is_string(v) ? json_string_length(v) : 0;
		canon[k].samples = (int64_t)k; /* temporarily: the index */
	}
	qsort(canon, nn, sizeof *canon, sym_by_name);
	for (size_t k = 0; k < nn;) {
		size_t j = k, first = (size_t)canon[k].samples;
		while (j < nn && !cmp_name(&canon[j], &canon[k])) {
			if ((size_t)canon[j].samples < first)
				first = (size_t)canon[j].samples;
			j++;
		}
		for (size_t i = k; i < j; i++)
			canon_of[canon[i].samples] = first;
		k = j;
	}
	for (size_t s = 0; s < c->nstacks; s++) {
		const json_t *stack = json_array_get(stacks, s), *v;
		size_t i;
		if (!c->per_stack[s])
			continue;
		json_array_foreach(stack, i, v) {
			json_int_t ni;
			size_t cn;
			if (self && i > 0)
				break;
			if (!json_is_integer(v))
				continue;
			ni = json_integer_value(v);
			if (ni < 0 || (uint64_t)ni >= nn)
				continue;
			cn = canon_of[ni];
			if (stamp[cn] == s + 1)
				continue;
			stamp[cn] = s + 1;
			by_name[cn] += c->per_stack[s];
		}
	}
	for (size_t k = 0; k < nn; k++) {
		const json_t *v = json_array_get(names, k);
		if (!by_name[k])
			continue;
		if (vec_reserve(syms, cap, *nsyms + 1, sizeof **syms))
			goto out;
		(*syms)[*nsyms].name = json_is_string(v) ? json_string_value(v) : "";
		(*syms)[*nsyms].len = json_is_string(v) ? json_string_length(v) : 0;
		(*syms)[*nsyms].samples = by_name[k];
		(*nsyms)++;
	}
	rc = 0;
out:
	free(by_name);
	free(stamp);
	free(canon);
	free(canon_of);
	return rc;
}

int query_cpu(struct qctx *q)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct row_window w = {q->start, q->end, q_wide(q)};
	struct sym *syms = NULL;
	size_t nsyms = 0, cap = 0, *idx, n, m = 0, from, to;
	int64_t total_samples = 0;
	int rc;

	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	rc = q_select_profiles(q, &idx, &n);
	if (rc)
		return rc;
	for (size_t k = 0; k < n && !rc; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		const json_t *cpu = json_object_get(pr, "cpu");
		struct counts c;
		int have = 0;
		if (!json_is_object(cpu))
			continue;
		c.nstacks = json_array_size(json_object_get(cpu, "stacks"));
		c.total = 0;
		c.per_stack = calloc(c.nstacks ? c.nstacks : 1,
		                     sizeof *c.per_stack);
		if (!c.per_stack) {
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
			break;
		}
		if (q_whole_run(q))
			rc = dataset_run_samples(q->ds, (int64_t)idx[k], &have,
			                         &c.total, on_stack, &c, q->e);
		if (!rc && !have)
			rc = dataset_samples(q->ds, (int64_t)idx[k], &w, on_sample,
			                     &c, q->e);
		if (!rc && add_profile(cpu, &c, q->p->self_time, &syms, &nsyms, &cap))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		total_samples += c.total;
		free(c.per_stack);
	}
	free(idx);
	if (rc) {
		free(syms);
		return rc;
	}
	/* Merge equal symbols across profiles, then rank. */
	if (nsyms > 1)
		qsort(syms, nsyms, sizeof *syms, sym_by_name);
	for (size_t k = 0; k < nsyms; k++) {
		if (m && !cmp_name(&syms[m - 1], &syms[k]))
			syms[m - 1].samples += syms[k].samples;
		else
			syms[m++] = syms[k];
	}
	if (m > 1)
		qsort(syms, m, sizeof *syms, sym_by_rank);
	q_page(q, m, &from, &to);
	q_list_head(q, m);
	for (size_t k = from; k < to; k++) {
		struct qitem it;
		if (k > from)
			buf_putc(q->out, ',');
		qi_begin(&it, q);
		if (qi_key(&it, "symbol"))
			jsonout_str(q->out, syms[k].name, syms[k].len);
		if (qi_key(&it, "samples"))
			jsonout_int(q->out, syms[k].samples);
		if (qi_key(&it, "fraction"))
			jsonout_real(q->out, (double)syms[k].samples /
			                             (double)total_samples);
		qi_end(&it);
	}
	q_list_tail(q);
	buf_puts(q->out, ",\"total_samples\":");
	jsonout_int(q->out, total_samples);
	if (q->p->self_time)
		buf_puts(q->out, ",\"mode\":\"self\",\"attribution\":\"Leaf-frame "
		                 "(self) process samples; not per-request CPU "
		                 "time.\"");
	else
		buf_puts(q->out, ",\"attribution\":\"Inclusive process samples; "
		                 "not per-request CPU time.\"");
	q_list_close(q, m);
	free(syms);
	return 0;
}
