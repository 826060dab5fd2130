/*
 * gen-capture: deterministic synthetic evidence generator (srtctl-trace/1).
 *
 *   gen-capture --preset small|medium|large [--seed N] [--scale F] [--requests N] [--gzip] -o FILE
 *
 * Writes one compact evidence document.  The same preset, seed and scale give
 * byte-identical output.  Presets:
 *   small   about the size of tests/fixtures/example.trace.json
 *   medium  ~100k NVTX ranges, 4,400 CPU samples, ~200k metric points
 *   large   the benchmark capture of doc/architecture.md "Performance
 *           bars": a 900-second run, 406 requests, 4,162,788 NVTX ranges over 8 profiles,
 *           260,000 CPU samples (200,000 on the frontend, a twentieth of that on
 *           every GPU profile but the first), 7,616,598 points in 600 series
 * --scale F multiplies the row counts (events, CPU samples, metric points).
 * --requests N replaces the request count: sessions (one per five
 * requests), agents, lifecycles (every third available, with stages and
 * activities), joined spans, unjoined spans (one per 20 requests) and
 * iterations (one per 4 requests) follow it, and the run lasts at least
 * N * 3.6 ms; without it every preset's bytes are unchanged.
 * Every preset carries every edge case of doc/evidence-document.md: setting series
 * with pre-run values, null invalidations and conflicting timestamps, point
 * values beyond 2^63 and 2^64, string and integer ranks, zero-length and
 * pre-zero root ranges ([-1.0, duration], [-1e-30, ...]), non-ASCII names, a
 * truncated profile (with its meta.warnings sentence), legacy and unaligned
 * iteration rows, an unjoined server span, a "None" global_tid, a profile
 * without CPU samples, a request whose span ends after the client's end (and
 * says so).  Values stay coherent: a "fraction" in [0, 1], a "percent" in
 * [0, 100], the request limit 8..256 and the token budget 8192..262144.
 * Times are whole nanoseconds printed as seconds; every number goes through
 * common/jsonout (num_emit for big integers).  Output is buffered in 1 MiB
 * chunks; --gzip compresses with zlib level 1.
 */

#include <errno.h>
#include <time.h>

#include "gen-capture/gencap.h"

/* Per-family tallies for metric_catalog. */
struct tally { int64_t series, samples; };

static const char *big_values[] = {"18446744073709551615", "100000000000000000000",
                                   "9223372036854775808", "-18446744073709551617"};

/* full: the top of a V_FULL value, from the family's unit (a fraction stays
 * in [0, 1], a percentage in [0, 100]). */
static void emit_point_value(struct gen *g, int kind, double full, struct rng *r, int64_t k, int s,
                             int64_t *state, int *isnull)
{
	*isnull = 0;
	switch (kind) {
	case V_INT:
		*state += below(r, 3) - 1;
		*state = *state < 0 ? 0 : *state > 64 ? 64 : *state;
		if (unif(r) < 0.0005)
			*isnull = 1, N(g);
		else
			I(g, *state);
		break;
	case V_COUNTER:
		*state += below(r, 5000);
		I(g, *state);
		break;
	case V_SHORT:
		R(g, (double)below(r, 10001) / 100.0);
		break;
	case V_FULL:
		R(g, unif(r) * full);
		break;
	case V_BIG:
		if (s < NFAM && k >= 1 && k <= 4) {
			struct num n = {.kind = NUM_BIG, .big = big_values[k - 1],
			                .big_len = strlen(big_values[k - 1])};
			num_emit(&g->b, &n);
			buf_putc(&g->b, ',');
		} else {
			*state += below(r, 2000001) - 1000000;
			I(g, 40000000000LL + *state);
		}
		break;
	}
}

static void emit_series(struct gen *g, const struct plan *p, int s, struct tally *t, int64_t *row)
{
	const struct fam *f = &gencap_fams[series_fam(s)];
	int w = series_worker(p, s), rank = series_rank(p, s), logd = f->temporal != NULL;
	int hw = !strcmp(f->group, "hardware");
	/* settings: a request limit of 8..256, a token budget of 8192..262144 */
	int64_t setting0 = !strcmp(f->unit, "tokens") ? 8192 : 8;
	double full = !strcmp(f->unit, "fraction") ? 1.0 : !strcmp(f->unit, "percent") ? 100.0 : 350.0;
	int src = logd ? (is_front(p, w) ? p->src_front_log : p->src_worker_log0 + w) : p->src_tach;
	int64_t n = p->series_points[s], state = 0, prev = INT64_MIN, nconf = 0, last_conf = INT64_MIN;
	char wn[32], h[16], rk[16];
	struct rng r;
	struct buf conf;

	rng_seed(&r, p->seed, 1000 + (uint64_t)s);
	buf_init(&conf, 0);
	gencap_worker_name(p, w, wn, sizeof wn), gencap_host_name(p, w, h, sizeof h);
	snprintf(rk, sizeof rk, "%d", rank);
	op(g, '{');
	KI(g, "id", s);
	KS(g, "name", f->name), KS(g, "label", f->label), KS(g, "unit", f->unit);
	KS(g, "value_kind", "stored");
	KS(g, "component", f->component), KS(g, "group", f->group), KS(g, "description", f->desc);
	if (logd)
		KS(g, "source_kind", is_front(p, w) ? "frontend_log" : "worker_log"),
		KS(g, "generator", "gen-capture"), KS(g, "temporal", f->temporal), KS(g, "raw_name", f->name);
	else
		Sf((K(g, "raw_name"), g), "%s{model=\"m\",rank=\"%d\"}", f->name, rank);
	KS(g, "endpoint", f->endpoint), KS(g, "host", h);
	KS(g, "gpu", logd ? NULL : rk);
	KS(g, "worker", wn);
	if (logd)
		KI(g, "rank", rank), KS(g, "rank_kind", s % 2 ? "dp" : "attention_tp");
	else if (hw)
		KN(g, "rank"), KN(g, "rank_kind");
	else
		KS(g, "rank", rk), KS(g, "rank_kind", "rank");
	K(g, "labels"); op(g, '{');
	if (logd)
		KS(g, "generator", "gen-capture"), Sf((K(g, "log_source"), g), "%d", src);
	else
		KS(g, "gpu", rk), KS(g, "hostname", h), KS(g, "rank", rk), KS(g, "metric.model", "m");
	cl(g, '}');
	if (logd)
		KR(g, "time_resolution_s", 0.001);
	K(g, "source_ids"); op(g, '['); I(g, src); cl(g, ']');
	K(g, "points"); op(g, '[');
	t->series++;
	for (int64_t k = 0; k < n; k++) {
		int64_t tm;
		int isnull = 0;
		op(g, '[');
		if (f->kind == V_SETTING) {
			/* two pre-run values at -1.5 s (a conflict), an invalidation,
			 * a conflict inside the run, a last value */
			static const int num[] = {-3, -3, 1, 1, 1, 9}, den[] = {2, 2, 3, 2, 2, 10};
			tm = k < 2 ? -15 * NS / 10 : p->dur / den[k] * num[k];
			T(g, tm);
			if (k == 2)
				isnull = 1, N(g);
			else
				I(g, setting0 << k);
		} else {
			tm = p->dur * k / n + below(&r, p->dur / n);
			int dup = k > 0 && unif(&r) < (f->kind == V_EVENT ? 0.01 : 0.002);
			if (dup)
				tm = prev;
			T(g, tm);
			if (f->kind == V_EVENT) { /* duplicates repeat (time, value) on a new line */
				if (!dup)
					state = below(&r, 100000);
				R(g, (double)state / 1000.0);
			} else {
				emit_point_value(g, f->kind, full, &r, k, s, &state, &isnull);
			}
		}
		I(g, src);
		I(g, (*row)++);
		cl(g, ']');
		if (tm == prev && f->kind != V_EVENT) {
			if (tm != last_conf) {
				jsonout_real(&conf, (double)tm / 1e9);
				buf_putc(&conf, ',');
				nconf++;
				last_conf = tm;
			}
			nconf++;
		}
		t->samples += !isnull;
		prev = tm;
		maybe_flush(g);
	}
	cl(g, ']');
	K(g, "conflict_timestamps"); op(g, '[');
	buf_append(&g->b, conf.data, conf.len);
	cl(g, ']');
	KI(g, "conflicting_samples", nconf);
	cl(g, '}');
	buf_free(&conf);
}

static void emit_catalog(struct gen *g, const struct tally *t)
{
	K(g, "metric_catalog"); op(g, '[');
	for (int f = 0; f < gencap_nfams; f++) {
		const struct fam *m = &gencap_fams[f];
		op(g, '{');
		KS(g, "name", m->name), KS(g, "component", m->component), KS(g, "group", m->group);
		KS(g, "title", m->label), KS(g, "unit", m->unit), KS(g, "description", m->desc);
		KS(g, "value_kind", "stored");
		if (m->temporal)
			KS(g, "temporal", m->temporal);
		KI(g, "series_count", t[f].series);
		KI(g, "samples", t[f].samples);
		K(g, "endpoints"); op(g, '['); if (t[f].series) S(g, m->endpoint); cl(g, ']');
		cl(g, '}');
	}
	cl(g, ']');
}

static const char *gpu_names[] = {
	"[Executor] forward step", "sampling_prep", "graph_replay", "Ünicode nested range",
	"前向计算 forward", "attention.kernel_launch", "moe.dispatch", "moe.combine", "allreduce",
	"kv_cache.alloc", "kv_cache.free", "scheduler.step", "detokenize", "prepare_inputs",
	"cuda_graph.capture", "ログ出力 (log flush)", "nccl:AllGather", "nccl:ReduceScatter",
	"rope", "layernorm", "mlp.gate_up", "mlp.down", "lm_head", "sample.topk",
};
static const char *front_names[] = {
	"route.generate", "preprocess.tokenize", "postprocess.detokenize", "http.accept",
	"路由 dispatch", "stream.send",
};
static const char *cpu_names[] = {
	"main", "poll", "tokenize", "[unresolved] 0x7f00", "epoll_wait", "PyEval_EvalFrameDefault",
	"serde_json::de::from_slice", "tokio::runtime::park", "hyper::proto::h1::dispatch",
	"解析 request", "memcpy", "malloc", "free", "__libc_recv", "__libc_send",
};
#define NGPU_NAMES ((int)(sizeof gpu_names / sizeof gpu_names[0]))
#define NFRONT_NAMES ((int)(sizeof front_names / sizeof front_names[0]))
#define NCPU_NAMES ((int)(sizeof cpu_names / sizeof cpu_names[0]))
#define NLAYERS 32
#define NTHREADS 4

static uint64_t gtid(const struct plan *p, int w, int t)
{
	uint64_t pid = is_front(p, w) ? 7000 : 4000 + 97 * (uint64_t)w;
	return (w % 2 ? 1ULL << 48 : 0) | pid << 24 | (pid + (uint64_t)t);
}

static void emit_cpu(struct gen *g, const struct plan *p, int w, struct rng *r)
{
	int front = is_front(p, w);
	int64_t ns = cpu_samples(p, w);
	int nstacks = (int)(4 + ns / 1000 > 300 ? 300 : 4 + ns / 1000);
	int nsym = NCPU_NAMES + 60;
	int64_t prev = -1;
	char tid[24];
	K(g, "cpu"); op(g, '{');
	KI(g, "pid", (int64_t)(gtid(p, w, 0) >> 24 & 0xFFFFFF));
	K(g, "names"); op(g, '[');
	for (int k = 0; k < NCPU_NAMES; k++)
		S(g, cpu_names[k]);
	for (int k = 0; k < 60; k++)
		Sf(g, front ? "frontend::handler_%02d" : "executor::step_%02d", k);
	cl(g, ']');
	K(g, "stacks"); op(g, '[');
	for (int k = 0; k < nstacks; k++) {
		op(g, '[');
		I(g, 0);
		for (int d = 1 + (int)below(r, 10); d > 0; d--)
			I(g, 1 + below(r, nsym - 1));
		cl(g, ']');
	}
	cl(g, ']');
	K(g, "samples"); op(g, '[');
	for (int64_t k = 0; k < ns; k++) {
		int64_t tm = p->dur * k / ns + below(r, p->dur / ns);
		if (k == 3 || (k > 0 && unif(r) < 0.01))
			tm = prev; /* two samples at one instant (different threads) */
		snprintf(tid, sizeof tid, "%llu", (unsigned long long)gtid(p, w, 1 + (int)(k % 3)));
		op(g, '[');
		T(g, tm);
		S(g, tid);
		double u = unif(r);
		I(g, (int64_t)(u * u * nstacks));
		I(g, 100 + k);
		cl(g, ']');
		prev = tm;
		maybe_flush(g);
	}
	cl(g, ']');
	KS(g, "attribution", front ? "frontend process samples; not request-specific CPU time"
	                           : "worker process samples; not request-specific CPU time");
	KS(g, "evidence", "COMPOSITE_EVENTS.id -> SAMPLING_CALLCHAINS.id -> StringIds.id");
	cl(g, '}');
}

static void emit_profile(struct gen *g, const struct plan *p, int w)
{
	int front = is_front(p, w), nn = front ? NFRONT_NAMES : NGPU_NAMES + 2 * NLAYERS;
	int64_t n = p->prof_events[w], d = p->dur, prevs = 0, prevd = 0;
	char wn[32], h[16], file[96], tids[NTHREADS + 1][24];
	struct rng r;

	rng_seed(&r, p->seed, 2000 + (uint64_t)w);
	gencap_worker_name(p, w, wn, sizeof wn), gencap_host_name(p, w, h, sizeof h);
	gencap_profile_file(p, w, file, sizeof file);
	for (int t = 0; t < NTHREADS; t++)
		snprintf(tids[t], sizeof tids[t], "%llu", (unsigned long long)gtid(p, w, t));
	snprintf(tids[NTHREADS], sizeof tids[NTHREADS], "None");
	op(g, '{');
	KI(g, "id", w);
	KS(g, "worker", wn);
	if (front)
		KN(g, "rank");
	else
		KI(g, "rank", w);
	KN(g, "engine"), KN(g, "gpus");
	KS(g, "host", h), KS(g, "host_source", "filename"), KS(g, "file", file);
	KI(g, "evidence_source", p->src_nsys0 + w);
	KS(g, "epoch_ns", "1790000000000000000");
	Sf((K(g, "system_clock_ns"), g), "%d", front ? 0 : 2500 * (w + 1));
	K(g, "capture"); op(g, '['); R(g, front ? 0.0 : -2.0); T(g, d); cl(g, ']');
	KI(g, "invalid_or_boundary_ranges", w == 0);
	KI(g, "timed_ranges_scanned", n + (w == 0));
	K(g, "names"); op(g, '[');
	for (int k = 0; k < (front ? NFRONT_NAMES : NGPU_NAMES); k++)
		S(g, front ? front_names[k] : gpu_names[k]);
	for (int k = 0; !front && k < NLAYERS; k++)
		Sf(g, "layer.%02d.self_attn", k), Sf(g, "layer.%02d.mlp", k);
	cl(g, ']');
	K(g, "name_definitions"); op(g, '[');
	for (int k = 0; !front && k < nn; k++) {
		if (k % 5) {
			N(g);
			continue;
		}
		op(g, '{');
		KS(g, "backend", "trtllm"), KS(g, "scope", k % 2 ? "device" : "host");
		Sf((K(g, "description"), g), "Range family %d.", k);
		cl(g, '}');
	}
	cl(g, ']');
	K(g, "threads"); op(g, '[');
	for (int t = front ? -1 : 0; t < NTHREADS; t++) {
		op(g, '{');
		if (t < 0) {
			KS(g, "global_tid", "None"), KN(g, "pid"), KN(g, "tid"), KN(g, "name");
		} else {
			uint64_t x = gtid(p, w, t);
			KS(g, "global_tid", tids[t]);
			KI(g, "pid", (int64_t)(x >> 24 & 0xFFFFFF)), KI(g, "tid", (int64_t)(x & 0xFFFFFF));
			if (t == 2)
				KN(g, "name");
			else
				Sf((K(g, "name"), g), t ? "worker-%d" : front ? "frontend-main" : "executor", t);
		}
		cl(g, '}');
	}
	cl(g, ']');
	K(g, "backends"); op(g, '['); if (!front) S(g, "trtllm"); cl(g, ']');
	K(g, "imported_range"); op(g, '['); R(g, front ? 0.0 : -1.0); T(g, d); cl(g, ']');
	K(g, "events"); op(g, '[');
	/* Roots: [-1.0, duration] and [-1e-30, 0.97 duration] (GPU), [0, duration]
	 * (frontend); then ranges in time buckets, some nested at the same start
	 * (shorter, so start ascending then end descending holds). */
	int roots = front ? 1 : 2;
	for (int k = 0; k < roots; k++) {
		op(g, '[');
		if (front)
			R(g, 0.0), T(g, d);
		else if (k == 0)
			R(g, -1.0), T(g, d);
		else
			R(g, -1e-30), T(g, d / 100 * 97);
		I(g, 0), S(g, tids[0]), I(g, 10 + k);
		cl(g, ']');
	}
	int64_t m = n - roots;
	for (int64_t k = 0; k < m; k++) {
		int64_t st = d * k / m + below(&r, d / m), du;
		double u = unif(&r);
		if (k > 0 && u < 0.2) {
			st = prevs, du = (int64_t)((double)prevd * unif(&r));
		} else {
			du = lognormal(&r, 40000, 1600);
			if (du > 20 * NS)
				du = 20 * NS;
			if (k == 1 || u > 0.997)
				du = 0;
		}
		int64_t en = st + du > d ? d : st + du;
		double v = unif(&r);
		int name = k == 2 ? 3 : (int)(v * v * v * nn);
		int t = front && unif(&r) < 0.05 ? NTHREADS : (int)below(&r, NTHREADS);
		op(g, '[');
		T(g, st), T(g, en), I(g, name), S(g, tids[t]), I(g, 10 + roots + k);
		cl(g, ']');
		prevs = st, prevd = en - st;
		maybe_flush(g);
	}
	cl(g, ']');
	KB(g, "truncated", w == p->truncated_profile);
	KB(g, "cuda", !front);
	KS(g, "attribution", front ? "shared frontend process context"
	                           : "shared worker/process/thread context; no per-request NVTX identity");
	KS(g, "clock", "Nsight session UTC anchor; cross-host skew not calibrated");
	KS(g, "detail_policy", "Selected categories");
	if (front) {
		K(g, "diagnostics"); op(g, '['); S(g, "Synthetic diagnostic line"); cl(g, ']');
		emit_cpu(g, p, w, &r);
	} else if (w == 0) {
		KN(g, "cpu"); /* a profile without CPU samples */
	} else {
		emit_cpu(g, p, w, &r);
	}
	cl(g, '}');
}

static void usage(FILE *f)
{
	fputs("usage: gen-capture --preset small|medium|large [--seed N] [--scale F] [--requests N]\n"
	      "                   [--gzip] -o FILE\n"
	      "Writes a deterministic synthetic evidence document (srtctl-trace/1).\n"
	      "  --preset P   small (fixture-sized), medium (~100k NVTX ranges, ~200k points),\n"
	      "               large (900 s, 406 requests, 4,162,788 ranges, 260,000 CPU samples,\n"
	      "               7,616,598 points in 600 series)\n"
	      "  --seed N     random seed (default 1); same preset+seed+scale = same bytes\n"
	      "  --scale F    multiply events, CPU samples and metric points by F (default 1)\n"
	      "  --requests N N client requests (1..100000000) instead of the preset's, with\n"
	      "               sessions, agents, lifecycles, spans and iterations to match;\n"
	      "               the run lasts at least N * 3.6 ms\n"
	      "  --gzip       gzip the output (zlib level 1)\n"
	      "  -o FILE      output file (required)\n", f);
}

int main(int argc, char **argv)
{
	const char *preset = NULL, *out = NULL;
	uint64_t seed = 1;
	double scale = 1.0;
	int64_t requests = 0;
	int gz = 0;
	char *end;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--gzip")) {
			gz = 1;
		} else if (v && !strcmp(a, "--preset")) {
			preset = v, k++;
		} else if (v && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			out = v, k++;
		} else if (v && !strcmp(a, "--seed")) {
			errno = 0;
			seed = strtoull(v, &end, 10), k++;
			if (errno || *end || !*v || *v == '-') {
				fprintf(stderr, "gen-capture: --seed needs a non-negative integer, not '%s'\n", v);
				return 2;
			}
		} else if (v && !strcmp(a, "--requests")) {
			errno = 0;
			long long n = strtoll(v, &end, 10);
			k++;
			if (errno || *end || !*v || n < 1 || n > 100000000) {
				fprintf(stderr, "gen-capture: --requests needs an integer in 1..100000000, not '%s'\n", v);
				return 2;
			}
			requests = n;
		} else if (v && !strcmp(a, "--scale")) {
			scale = strtod(v, &end), k++;
			if (*end || !*v || !(scale > 0) || scale > 1000) {
				fprintf(stderr, "gen-capture: --scale needs a number in (0, 1000], not '%s'\n", v);
				return 2;
			}
		} else {
			fprintf(stderr, "gen-capture: unknown or incomplete argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!preset || !out) {
		fprintf(stderr, "gen-capture: --preset and -o are required\n");
		usage(stderr);
		return 2;
	}

	struct plan p;
	if (gencap_plan_make(&p, preset, seed, scale, requests)) {
		fprintf(stderr, "gen-capture: unknown preset '%s' (small, medium or large)\n", preset);
		gencap_plan_free(&p);
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct gen g = {0};
	buf_init(&g.b, 0);
	if (gz)
		g.gz = gzopen(out, "wb1");
	else
		g.f = fopen(out, "wb");
	if (!g.gz && !g.f) {
		fprintf(stderr, "gen-capture: cannot create %s: %s\n", out, strerror(errno));
		gencap_plan_free(&p);
		return 1;
	}
	struct tally tally[32] = {{0}};
	int64_t row = 1;
	op(&g, '{');
	KS(&g, "schema", "srtctl-trace/1");
	int rc = gencap_emit_head(&g, &p);
	K(&g, "metrics"); op(&g, '[');
	for (int s = 0; !rc && s < p.nseries; s++)
		emit_series(&g, &p, s, &tally[series_fam(s)], &row);
	cl(&g, ']');
	emit_catalog(&g, tally);
	K(&g, "profiles"); op(&g, '[');
	for (int w = 0; !rc && w < p.nworkers; w++)
		emit_profile(&g, &p, w);
	cl(&g, ']');
	K(&g, "capabilities"); op(&g, '{');
	static const char *caps[] = {"requests", "request_breakdown", "server_activity", "metrics",
	                             "worker_metrics", "hardware_metrics", "nvtx", "cpu_samples",
	                             "nsight", "iterations"};
	for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++)
		KB(&g, caps[k], 1);
	cl(&g, '}');
	cl(&g, '}');
	g.b.data[g.b.len - 1] = '\n'; /* the top level's trailing comma */
	if (rc || g.b.failed)
		g.ioerr = 1, fprintf(stderr, "gen-capture: out of memory\n");
	flush(&g, 1);
	if (g.gz ? gzclose(g.gz) != Z_OK : fclose(g.f) != 0)
		g.ioerr = 1;
	buf_free(&g.b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (g.ioerr) {
		fprintf(stderr, "gen-capture: writing %s failed\n", out);
		remove(out);
		gencap_plan_free(&p);
		return 1;
	}
	fprintf(stderr, "gen-capture: %s: preset %s seed %llu scale %g: %d requests, %lld events, "
	        "%lld samples, %lld points in %.2f s\n", out, preset, (unsigned long long)seed, scale,
	        p.nreq, (long long)p.events, (long long)cpu_samples_total(&p), (long long)p.points,
	        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	gencap_plan_free(&p);
	return 0;
}
