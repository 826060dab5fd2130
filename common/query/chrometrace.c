/* chrometrace: a window as a Chrome trace (see chrometrace.h). */
#include "query/chrometrace.h"

#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "base/num.h"
#include "base/vec.h"
#include "query/qrange.h"

#define US 1e6
#define FLUSH_BYTES (1u << 20)
#define SPARE_TID 0x40000000

struct ct {
	struct dataset *ds;
	const struct chrometrace_opts *o;
	const json_t *cat;
	chrometrace_out_fn out;
	void *octx;
	struct err *e;
	struct buf b;
	int first;
	double a, z;     /* the window */
	double duration; /* the run's */
	struct chrometrace_counts n;
};

/* Hands the buffered text to the writer (always when force, else once it
 * holds a megabyte). */
static int flush(struct ct *c, int force)
{
	int rc;

	if (c->b.failed)
		return err_set(c->e, c->b.failed, c->b.failed == ERR_DATA
		               ? "a number of the trace is not finite"
		               : "out of memory");
	if (!c->b.len || (!force && c->b.len < FLUSH_BYTES))
		return 0;
	rc = c->out(c->octx, c->b.data, c->b.len, c->e);
	buf_reset(&c->b);
	if (rc && !c->e->code)
		err_set(c->e, ERR_DATA, "cannot write the trace");
	return rc ? c->e->code : 0;
}

/* Starts an event object: the separator, then "{". */
static void ev_open(struct ct *c)
{
	buf_puts(&c->b, c->first ? "{" : ",\n{");
	c->first = 0;
}

static void key(struct buf *b, const char *k)
{
	jsonout_cstr(b, k);
	buf_putc(b, ':');
}

/* The text JavaScript's template strings give v (strings as they are,
 * integers in decimal, reals in their shortest form without ".0"). */
static void js_text(struct buf *b, const json_t *v)
{
	char r[JSONOUT_REAL_MAX];

	if (json_is_string(v)) {
		buf_append(b, json_string_value(v), json_string_length(v));
	} else if (json_is_integer(v)) {
		buf_printf(b, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		double d = json_real_value(v);
		int n = jsonout_format_real(r, d);
		if (n > 2 && !strcmp(r + n - 2, ".0"))
			n -= 2;
		buf_append(b, r, n > 0 ? (size_t)n : 0);
	} else if (json_is_true(v)) {
		buf_puts(b, "true");
	} else if (json_is_false(v)) {
		buf_puts(b, "false");
	} else {
		buf_puts(b, "null");
	}
}

/* JavaScript truthiness of a catalog value (absent: false). */
static int truthy(const json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_string(v))
		return json_string_length(v) > 0;
	if (json_is_number(v))
		return json_number_value(v) != 0;
	return 1;
}

static int64_t id_of(const json_t *obj, size_t k)
{
	const json_t *v = json_object_get(obj, "id");
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)k;
}

static int str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && !strcmp(json_string_value(v), s);
}

/* ---- scope ---- */

/* The worker the series follow: --worker, else the worker of --profile
 * (NULL: every worker). */
static const json_t *scope_worker(const struct ct *c)
{
	const json_t *profiles = json_object_get(c->cat, "profiles"), *p;
	size_t k;

	if (c->o->worker || !c->o->has_profile)
		return NULL;
	json_array_foreach(profiles, k, p) {
		if (id_of(p, k) == c->o->profile)
			return json_object_get(p, "worker");
	}
	return NULL;
}

static int profile_in(const struct ct *c, const json_t *p, size_t k)
{
	if (c->o->has_profile && id_of(p, k) != c->o->profile)
		return 0;
	return !c->o->worker || str_is(json_object_get(p, "worker"),
	                               c->o->worker);
}

static int series_in(const struct ct *c, const json_t *s, const json_t *w)
{
	const json_t *sw = json_object_get(s, "worker");
	size_t k;

	if (c->o->worker && !str_is(sw, c->o->worker))
		return 0;
	if (!c->o->worker && c->o->has_profile &&
	    !(json_is_string(w) && json_equal(sw, w)))
		return 0;
	if (!c->o->metrics)
		return 1;
	for (k = 0; k < c->o->nmetrics; k++)
		if (str_is(json_object_get(s, "name"), c->o->metrics[k]))
			return 1;
	return 0;
}

/* Appends "a, b" of the distinct string members key of arr's elements
 * not already in seen (a buffer of NUL-separated names). */
static void worker_names(struct buf *t, struct buf *seen, const json_t *arr,
                         const char *key)
{
	const json_t *el;
	size_t k;

	json_array_foreach(arr, k, el) {
		const json_t *v = json_object_get(el, key);
		const char *s = json_string_value(v);
		int dup = 0;
		if (!json_is_string(v))
			continue;
		for (size_t at = 0; at < seen->len; at += strlen(seen->data + at) + 1)
			if (!strcmp(seen->data + at, s))
				dup = 1;
		if (dup)
			continue;
		buf_printf(t, "%s%s", seen->len ? ", " : "", s);
		buf_append(seen, s, strlen(s) + 1);
	}
}

/* The usage errors: the window (the query kinds' text), an unknown profile
 * or worker. */
static int check(struct ct *c, double duration)
{
	const struct chrometrace_opts *o = c->o;
	const json_t *profiles = json_object_get(c->cat, "profiles"), *p;
	size_t k, n = json_array_size(profiles);
	int found = 0;

	c->a = o->has_from ? o->from : 0;
	c->z = o->has_to ? o->to : duration;
	if (!(isfinite(c->a) && isfinite(c->z) && c->a >= 0 && c->a < c->z &&
	      c->z <= duration)) {
		char d[JSONOUT_REAL_MAX];
		if (jsonout_format_real(d, duration) < 0)
			strcpy(d, "null");
		return err_set(c->e, ERR_USAGE, "Require 0 <= start < end <= %s "
		               "(run duration in seconds from origin_ns)", d);
	}
	if (o->has_profile) {
		json_array_foreach(profiles, k, p) {
			if (id_of(p, k) == o->profile)
				found = 1;
		}
		if (!found && n)
			return err_set(c->e, ERR_USAGE,
			               "No profile %lld; profiles are 0-%zu.",
			               (long long)o->profile, n - 1);
		if (!found)
			return err_set(c->e, ERR_USAGE, "No profile %lld; the "
			               "dataset has no profiles.",
			               (long long)o->profile);
	}
	if (o->worker) {
		struct buf t, seen;
		const char *lists[3][2] = {{"workers", "id"},
		                           {"profiles", "worker"},
		                           {"metrics", "worker"}};
		int rc;
		buf_init(&t, 0);
		buf_init(&seen, 0);
		for (k = 0; k < 3; k++)
			worker_names(&t, &seen, json_object_get(c->cat,
			             lists[k][0]), lists[k][1]);
		found = 0;
		for (size_t at = 0; at < seen.len;
		     at += strlen(seen.data + at) + 1)
			if (!strcmp(seen.data + at, o->worker))
				found = 1;
		rc = found ? 0
		     : t.failed || seen.failed
		           ? err_set(c->e, ERR_NOMEM, "out of memory")
		           : err_set(c->e, ERR_USAGE,
		                     "No worker named '%s'. Workers: %s.",
		                     o->worker, t.len ? t.data : "none");
		buf_free(&t);
		buf_free(&seen);
		return rc;
	}
	return 0;
}

/* ---- NVTX ranges ---- */

/* The global tid's thread tid (its low 24 bits when it is a decimal
 * integer, else -1) and pid (the next 24 bits). */
static int tid_parts(const char *s, size_t n, int64_t *pid, int64_t *tid)
{
	uint64_t g = 0;
	size_t i = n && s[0] == '-';
	int neg = (int)i;

	if (i == n)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		g = g * 10 + (uint64_t)(s[i] - '0');
	}
	if (neg)
		g = 0 - g;
	*pid = (int64_t)((g >> 24) & 0xffffff);
	*tid = (int64_t)(g & 0xffffff);
	return 0;
}

struct track {
	char *gtid;
	size_t len;
	int64_t tid;
};

struct prof {
	struct ct *c;
	const json_t *p, *names;
	int64_t id;
	struct track *t;
	size_t nt, cap;
	int64_t spare;
};

/* The name of thread g: the profile's threads list, else the NVTX
 * summary's thread_names (NULL: none). */
static const json_t *thread_name(const json_t *p, const char *g, size_t n)
{
	const json_t *th, *ns = json_object_get(p, "nvtx_summary"), *tids;
	size_t k;

	json_array_foreach(json_object_get(p, "threads"), k, th) {
		const json_t *gt = json_object_get(th, "global_tid");
		const json_t *nm = json_object_get(th, "name");
		if (json_is_string(gt) && json_string_length(gt) == n &&
		    !memcmp(json_string_value(gt), g, n) && truthy(nm))
			return nm;
	}
	tids = json_object_get(ns, "threads");
	json_array_foreach(tids, k, th) {
		const json_t *nm = json_array_get(
			json_object_get(ns, "thread_names"), k);
		if (json_is_string(th) && json_string_length(th) == n &&
		    !memcmp(json_string_value(th), g, n) && truthy(nm))
			return nm;
	}
	return NULL;
}

/* The label of thread g: pid:tid (or tid, the text itself when it is not
 * a number, "unknown thread" when empty) and its name. */
static void thread_label(struct buf *b, const json_t *p, const char *g,
                         size_t n)
{
	const json_t *nm = thread_name(p, g, n);
	int64_t pid, tid;
	int digits = n > 0 && n <= 20;

	for (size_t i = 0; i < n; i++)
		digits = digits && g[i] >= '0' && g[i] <= '9';
	if (!n)
		buf_puts(b, "unknown thread");
	else if (!digits || tid_parts(g, n, &pid, &tid))
		buf_append(b, g, n);
	else if (pid)
		buf_printf(b, "%lld:%lld", (long long)pid, (long long)tid);
	else
		buf_printf(b, "%lld", (long long)tid);
	if (nm) {
		buf_puts(b, " \xc2\xb7 ");
		js_text(b, nm);
	}
}

static void meta_event(struct ct *c, const char *name, int64_t pid,
                       int64_t tid)
{
	ev_open(c);
	buf_puts(&c->b, "\"ph\":\"M\",\"name\":");
	jsonout_cstr(&c->b, name);
	buf_puts(&c->b, ",\"pid\":");
	jsonout_int(&c->b, pid);
	buf_puts(&c->b, ",\"tid\":");
	jsonout_int(&c->b, tid);
	buf_puts(&c->b, ",\"args\":{");
}

/* Emits a name metadata event whose args.name is the text in t. */
static void name_event(struct ct *c, const char *name, int64_t pid,
                       int64_t tid, const struct buf *t)
{
	meta_event(c, name, pid, tid);
	key(&c->b, "name");
	jsonout_str(&c->b, t->data ? t->data : "", t->len);
	buf_puts(&c->b, "}}");
}

/* The trace tid of global tid g (a new track gets its number and its
 * thread_name event: a tid another thread of the profile holds takes a
 * free one). */
static int track_of(struct prof *pf, const char *g, size_t n, int64_t *out)
{
	int64_t pid, tid;
	struct buf t;
	int taken;

	for (size_t k = 0; k < pf->nt; k++)
		if (pf->t[k].len == n && (!n || !memcmp(pf->t[k].gtid, g, n))) {
			*out = pf->t[k].tid;
			return 0;
		}
	if (tid_parts(g, n, &pid, &tid))
		tid = 0;
	do {
		taken = 0;
		for (size_t k = 0; k < pf->nt; k++)
			taken |= pf->t[k].tid == tid;
		if (taken)
			tid = pf->spare++;
	} while (taken);
	if (vec_reserve(&pf->t, &pf->cap, pf->nt + 1, sizeof *pf->t) ||
	    !(pf->t[pf->nt].gtid = malloc(n ? n : 1)))
		return err_set(pf->c->e, ERR_NOMEM, "out of memory");
	if (n)
		memcpy(pf->t[pf->nt].gtid, g, n);
	pf->t[pf->nt].len = n;
	pf->t[pf->nt++].tid = tid;
	buf_init(&t, 0);
	thread_label(&t, pf->p, g, n);
	name_event(pf->c, "thread_name", pf->id, tid, &t);
	buf_free(&t);
	*out = tid;
	return 0;
}

/* ,"pid":P,"tid":T,"args":{"source_row":R (the args left open). */
static void track_args(struct buf *b, int64_t pid, int64_t tid, int64_t row)
{
	buf_puts(b, ",\"pid\":");
	jsonout_int(b, pid);
	buf_puts(b, ",\"tid\":");
	jsonout_int(b, tid);
	buf_puts(b, ",\"args\":{\"source_row\":");
	jsonout_int(b, row);
}

static int on_range(void *ctx, int64_t ordinal, const struct row_event *r,
                    int64_t depth)
{
	struct prof *pf = ctx;
	struct ct *c = pf->c;
	const json_t *nm = json_array_get(pf->names, (size_t)r->name);
	int64_t tid = 0;
	int rc;

	(void)ordinal;
	if (!isfinite(r->start) || !isfinite(r->end))
		return 0;
	if ((rc = track_of(pf, r->tid, r->tid_len, &tid)))
		return rc;
	ev_open(c);
	key(&c->b, "name");
	if (r->name >= 0 && json_is_string(nm))
		jsonout_str(&c->b, json_string_value(nm),
		            json_string_length(nm));
	else
		jsonout_cstr(&c->b, "(no name)");
	buf_puts(&c->b, ",\"cat\":\"nvtx\",\"ph\":\"X\",\"ts\":");
	jsonout_real(&c->b, r->start * US);
	buf_puts(&c->b, ",\"dur\":");
	jsonout_real(&c->b, (r->end - r->start) * US);
	track_args(&c->b, pf->id, tid, r->source_row);
	buf_puts(&c->b, ",\"depth\":");
	jsonout_int(&c->b, depth);
	buf_puts(&c->b, ",\"global_tid\":");
	jsonout_str(&c->b, r->tid, r->tid_len);
	buf_puts(&c->b, "}}");
	c->n.rows++;
	return flush(c, 0);
}

/* A CPU sample: an instant event on its thread's track named by its leaf
 * frame, args.stack its frames leaf first. */
static int on_sample(void *ctx, int64_t ordinal, const struct row_sample *r)
{
	struct prof *pf = ctx;
	struct ct *c = pf->c;
	const json_t *cpu = json_object_get(pf->p, "cpu");
	const json_t *names = json_object_get(cpu, "names"), *f;
	const json_t *stack = r->stack >= 0 ? json_array_get(json_object_get(cpu, "stacks"), (size_t)r->stack) : NULL;
	const json_t *leaf = json_array_get(names, (size_t)json_integer_value(json_array_get(stack, 0)));
	int64_t tid = 0;
	size_t i;
	int rc;

	(void)ordinal;
	if (!isfinite(r->time))
		return 0;
	if ((rc = track_of(pf, r->tid, r->tid_len, &tid)))
		return rc;
	ev_open(c);
	key(&c->b, "name");
	if (json_array_size(stack) && json_is_string(leaf))
		jsonout_str(&c->b, json_string_value(leaf), json_string_length(leaf));
	else
		jsonout_cstr(&c->b, "(unknown stack)");
	buf_puts(&c->b, ",\"cat\":\"cpu\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	jsonout_real(&c->b, r->time * US);
	track_args(&c->b, pf->id, tid, r->source_row);
	buf_puts(&c->b, ",\"stack\":[");
	json_array_foreach(stack, i, f) {
		const json_t *nm = json_array_get(names, (size_t)json_integer_value(f));
		if (i)
			buf_putc(&c->b, ',');
		if (json_is_string(nm))
			jsonout_str(&c->b, json_string_value(nm), json_string_length(nm));
		else
			buf_puts(&c->b, "null");
	}
	buf_puts(&c->b, "],\"global_tid\":");
	jsonout_str(&c->b, r->tid, r->tid_len);
	buf_puts(&c->b, "}}");
	c->n.samples++;
	return flush(c, 0);
}

static int profile_events(struct ct *c, const json_t *p, size_t k)
{
	struct prof pf;
	struct row_window w = {c->a, c->z, 0};
	const json_t *rank = json_object_get(p, "rank");
	const json_t *worker = json_object_get(p, "worker");
	struct buf t;
	int rc;

	memset(&pf, 0, sizeof pf);
	pf.c = c;
	pf.p = p;
	pf.names = json_object_get(p, "names");
	pf.id = id_of(p, k);
	pf.spare = SPARE_TID;
	buf_init(&t, 0);
	buf_printf(&t, "profile %lld \xc2\xb7 ", (long long)pf.id);
	if (truthy(worker))
		js_text(&t, worker);
	else
		buf_putc(&t, '?');
	if (rank && !json_is_null(rank)) {
		buf_puts(&t, " rank ");
		js_text(&t, rank);
	}
	name_event(c, "process_name", pf.id, 0, &t);
	buf_free(&t);
	meta_event(c, "process_sort_index", pf.id, 0);
	key(&c->b, "sort_index");
	jsonout_int(&c->b, pf.id);
	buf_puts(&c->b, "}}");
	/* a window over a quarter of the run: a sequential walk (as the
	 * query kinds decide) */
	w.wide = c->z - c->a >= c->duration / 4;
	rc = qrange_nested(c->ds, (int64_t)k, &w, on_range, &pf, c->e);
	if (!rc && json_object_get(p, "cpu"))
		rc = dataset_samples(c->ds, (int64_t)k, &w, on_sample, &pf, c->e);
	for (size_t i = 0; i < pf.nt; i++)
		free(pf.t[i].gtid);
	free(pf.t);
	return rc;
}

/* ---- metric series ---- */

struct series {
	struct ct *c;
	struct buf label;
};

static int on_point(void *ctx, int64_t ordinal, const struct row_point *r)
{
	struct series *s = ctx;
	struct ct *c = s->c;

	(void)ordinal;
	if (r->value.kind == NUM_NULL || !isfinite(r->time))
		return 0;
	ev_open(c);
	key(&c->b, "name");
	jsonout_str(&c->b, s->label.data, s->label.len);
	buf_puts(&c->b, ",\"cat\":\"metric\",\"ph\":\"C\",\"ts\":");
	jsonout_real(&c->b, r->time * US);
	buf_printf(&c->b, ",\"pid\":%d,\"tid\":0,\"args\":{\"value\":",
	           CHROMETRACE_METRIC_PID);
	num_emit(&c->b, &r->value);
	buf_puts(&c->b, "}}");
	c->n.points++;
	return flush(c, 0);
}

/* "name · worker · rank R · gpu G · host" (the parts that are set), or
 * "name · series ID". */
static void series_label(struct buf *b, const json_t *s, size_t k)
{
	const char *keys[4] = {"worker", "rank", "gpu", "host"};
	const char *pre[4] = {"", "rank ", "gpu ", ""};
	int any = 0;

	js_text(b, json_object_get(s, "name"));
	buf_puts(b, " \xc2\xb7 ");
	for (size_t i = 0; i < 4; i++) {
		const json_t *v = json_object_get(s, keys[i]);
		/* rank counts when not null; the others when truthy */
		if (i == 1 ? !v || json_is_null(v) : !truthy(v))
			continue;
		buf_puts(b, any ? " \xc2\xb7 " : "");
		buf_puts(b, pre[i]);
		js_text(b, v);
		any = 1;
	}
	if (!any)
		buf_printf(b, "series %lld", (long long)id_of(s, k));
}

static int metric_events(struct ct *c)
{
	const json_t *all = json_object_get(c->cat, "metrics"), *s;
	const json_t *w = scope_worker(c);
	struct row_window win = {c->a, c->z, c->z - c->a >= c->duration / 4};
	size_t k;
	int rc = 0, head = 0;

	json_array_foreach(all, k, s) {
		struct series se;
		if (!series_in(c, s, w))
			continue;
		if (!head) {
			struct buf t;
			buf_init(&t, 0);
			buf_puts(&t, "metrics");
			name_event(c, "process_name", CHROMETRACE_METRIC_PID,
			           0, &t);
			buf_free(&t);
			head = 1;
		}
		se.c = c;
		buf_init(&se.label, 0);
		series_label(&se.label, s, k);
		rc = se.label.failed
		         ? err_set(c->e, ERR_NOMEM, "out of memory")
		         : dataset_points(c->ds, (int64_t)k, &win, on_point,
		                          &se, c->e);
		buf_free(&se.label);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- requests ---- */

static void async_event(struct ct *c, const json_t *name, const char *lit,
                        const struct buf *id, char ph, double t)
{
	ev_open(c);
	key(&c->b, "name");
	if (name)
		jsonout_tree(&c->b, name, 0);
	else
		jsonout_cstr(&c->b, lit);
	buf_printf(&c->b, ",\"cat\":\"request\",\"ph\":\"%c\",\"id\":", ph);
	jsonout_str(&c->b, id->data, id->len);
	buf_puts(&c->b, ",\"ts\":");
	jsonout_real(&c->b, t * US);
	buf_printf(&c->b, ",\"pid\":%d,\"tid\":0", CHROMETRACE_REQ_PID);
}

static int on_request(void *ctx, int64_t ordinal, const json_t *r)
{
	static const char *const akeys[] = {"id", "session", "status",
	                                    "ttft_ms", "workers"};
	struct ct *c = ctx;
	const json_t *st = json_object_get(r, "start");
	const json_t *en = json_object_get(r, "end");
	const json_t *fi = json_object_get(r, "first");
	const json_t *rid = json_object_get(r, "id");
	double a, z, f;
	struct buf id;
	int sep = 0;

	(void)ordinal;
	if (!json_is_number(st) || !json_is_number(en))
		return 0;
	a = json_number_value(st);
	z = json_number_value(en);
	if (!(a <= c->z && z >= c->a))
		return 0;
	if (c->n.requests >= CHROMETRACE_MAX_REQUESTS)
		return 0;
	if (!c->n.requests) {
		struct buf t;
		buf_init(&t, 0);
		buf_puts(&t, "requests");
		name_event(c, "process_name", CHROMETRACE_REQ_PID, 0, &t);
		buf_free(&t);
	}
	buf_init(&id, 0);
	buf_puts(&id, "req:");
	js_text(&id, rid);
	async_event(c, rid ? rid : json_null(), NULL, &id, 'b', a);
	buf_puts(&c->b, ",\"args\":{");
	for (size_t i = 0; i < sizeof akeys / sizeof *akeys; i++) {
		const json_t *v = json_object_get(r, akeys[i]);
		if (!v)
			continue;
		buf_puts(&c->b, sep++ ? "," : "");
		key(&c->b, akeys[i]);
		jsonout_tree(&c->b, v, 0);
	}
	buf_puts(&c->b, "}}");
	if (json_is_number(fi) && (f = json_number_value(fi)) >= a && f <= z) {
		async_event(c, NULL, "prefill", &id, 'b', a);
		buf_putc(&c->b, '}');
		async_event(c, NULL, "prefill", &id, 'e', f);
		buf_putc(&c->b, '}');
		async_event(c, NULL, "decode", &id, 'b', f);
		buf_putc(&c->b, '}');
		async_event(c, NULL, "decode", &id, 'e', z);
		buf_putc(&c->b, '}');
	}
	async_event(c, rid ? rid : json_null(), NULL, &id, 'e', z);
	buf_putc(&c->b, '}');
	if (id.failed)
		c->b.failed = id.failed;
	buf_free(&id);
	c->n.requests++;
	return flush(c, 0);
}

/* ---- the document ---- */

static int body(struct ct *c)
{
	const json_t *profiles = json_object_get(c->cat, "profiles"), *p;
	const json_t *meta = json_object_get(c->cat, "meta");
	const json_t *job = json_object_get(meta, "job");
	const json_t *origin = json_object_get(meta, "origin_ns");
	size_t k;
	int rc;

	buf_puts(&c->b, "{\"displayTimeUnit\":\"ms\",\"otherData\":"
	         "{\"generator\":\"dsight export\",\"job\":");
	jsonout_tree(&c->b, job ? job : json_null(), 0);
	buf_puts(&c->b, ",\"origin_ns\":");
	jsonout_tree(&c->b, origin ? origin : json_null(), 0);
	buf_puts(&c->b, ",\"window\":[");
	jsonout_real(&c->b, c->a);
	buf_putc(&c->b, ',');
	jsonout_real(&c->b, c->z);
	buf_puts(&c->b, "]},\"traceEvents\":[\n");
	json_array_foreach(profiles, k, p) {
		if (!profile_in(c, p, k))
			continue;
		if ((rc = profile_events(c, p, k)))
			return rc;
	}
	if ((rc = metric_events(c)))
		return rc;
	if (c->o->requests &&
	    (rc = dataset_foreach(c->ds, EVIDENCE_REQUESTS, on_request, c,
	                          c->e)))
		return rc;
	buf_puts(&c->b, "\n]}\n");
	return flush(c, 1);
}

int chrometrace_write(struct dataset *ds, const struct chrometrace_opts *o,
                      chrometrace_out_fn out, void *ctx,
                      struct chrometrace_counts *counts, struct err *e)
{
	struct ct c;
	const json_t *meta;
	int ok, rc;
	double duration;

	memset(&c, 0, sizeof c);
	c.ds = ds;
	c.o = o;
	c.cat = dataset_catalog(ds);
	c.out = out;
	c.octx = ctx;
	c.e = e;
	c.first = 1;
	meta = json_object_get(c.cat, "meta");
	ok = json_is_number(json_object_get(meta, "duration"));
	duration = ok ? json_number_value(json_object_get(meta, "duration"))
	              : NAN;
	c.duration = duration;
	if ((rc = check(&c, duration)))
		return rc;
	if ((rc = dataset_read_begin(ds, e)))
		return rc;
	buf_init(&c.b, 0);
	rc = body(&c);
	buf_free(&c.b);
	dataset_read_end(ds);
	if (counts)
		*counts = c.n;
	return rc;
}
