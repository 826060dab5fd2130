/*
 * gencap: the shared pieces of the gen-capture tool (see scripts/tools/gen-capture.c).
 *
 * Owns the deterministic random streams (xoshiro256** per stream id), the
 * chunked comma-managing JSON writer (every value appends "value," and cl()
 * closes a container by replacing the trailing comma), and the plan: every
 * count of the document fixed before anything is written.  plan.c builds
 * the plan and names things; doc.c writes the catalog-sized sections.
 */
#ifndef GENCAP_H
#define GENCAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "base/num.h"

#define NS 1000000000LL
#define MAXW 16

/* ---- deterministic random numbers (xoshiro256**, seeded by splitmix64) */
struct rng { uint64_t s[4]; };

static inline uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0x100000001b3ULL ^ (stream + 1) * 0xd6e8feb86659fd93ULL;
	for (int k = 0; k < 4; k++)
		r->s[k] = splitmix(&x);
}

static inline uint64_t rnd(struct rng *r)
{
	uint64_t *s = r->s, out = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t;
	s[3] = s[3] << 45 | s[3] >> 19;
	return out;
}

static inline double unif(struct rng *r) { return (double)(rnd(r) >> 11) * 0x1p-53; }
static inline int64_t below(struct rng *r, int64_t n) { return n > 0 ? (int64_t)(unif(r) * (double)n) : 0; }

/* median * exp(sigma * N(0,1)) in integer arithmetic only, so the bytes do
 * not depend on the libm: N is the sum of four 16-bit uniforms (Irwin-Hall,
 * standard deviation 37837.2, so the tails stop at 3.46 sigma) and exp
 * moves in steps of 1/16 octave.  sigma_milli is sigma * 1000. */
static inline int64_t lognormal(struct rng *r, int64_t median, int64_t sigma_milli)
{
	static const int64_t frac[16] = {65536, 68438, 71468, 74632, 77936, 81386, 84990, 88752,
	                                 92682, 96785, 101070, 105545, 110218, 115098, 120194, 125515};
	int64_t z = -4 * 32768;
	for (int k = 0; k < 4; k++)
		z += (int64_t)(rnd(r) >> 48);
	int64_t e = z * sigma_milli * 16 / 26226767; /* 1000 ln2 37837.2: 1/16 octaves */
	int64_t sh = e >= 0 ? e / 16 : -((15 - e) / 16), v = median * frac[e - sh * 16] >> 16;
	return sh >= 0 ? v << sh : v >> -sh;
}

/* ---- output: values append "value," and close() swallows the last comma */
struct gen {
	struct buf b;
	FILE *f;
	gzFile gz;
	int ioerr;
};

static inline void flush(struct gen *g, int all)
{
	size_t n = all ? g->b.len : g->b.len - 1; /* keep a trailing comma */
	if (!n || g->ioerr)
		return;
	if (g->gz ? gzwrite(g->gz, g->b.data, (unsigned)n) != (int)n
	          : fwrite(g->b.data, 1, n, g->f) != n)
		g->ioerr = 1;
	memmove(g->b.data, g->b.data + n, g->b.len - n);
	g->b.len -= n;
}

static inline void maybe_flush(struct gen *g)
{
	if (g->b.len >= (1u << 20))
		flush(g, 0);
}

static inline void op(struct gen *g, char c) { buf_putc(&g->b, c); }

static inline void cl(struct gen *g, char c)
{
	if (g->b.len && g->b.data[g->b.len - 1] == ',')
		g->b.data[g->b.len - 1] = c;
	else
		buf_putc(&g->b, c);
	buf_putc(&g->b, ',');
}

static inline void K(struct gen *g, const char *k) { jsonout_cstr(&g->b, k); buf_putc(&g->b, ':'); }
static inline void S(struct gen *g, const char *s) { jsonout_cstr(&g->b, s); buf_putc(&g->b, ','); }
static inline void I(struct gen *g, int64_t v) { jsonout_int(&g->b, v); buf_putc(&g->b, ','); }
static inline void R(struct gen *g, double v) { jsonout_real(&g->b, v); buf_putc(&g->b, ','); }
static inline void T(struct gen *g, int64_t ns) { R(g, (double)ns / 1e9); }
static inline void N(struct gen *g) { buf_append(&g->b, "null,", 5); }
static inline void Bo(struct gen *g, int v) { buf_puts(&g->b, v ? "true," : "false,"); }
static inline void Sf(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void Sf(struct gen *g, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	S(g, tmp);
}
static inline void KS(struct gen *g, const char *k, const char *v) { K(g, k); if (v) S(g, v); else N(g); }
static inline void KI(struct gen *g, const char *k, int64_t v) { K(g, k); I(g, v); }
static inline void KR(struct gen *g, const char *k, double v) { K(g, k); R(g, v); }
static inline void KT(struct gen *g, const char *k, int64_t ns) { K(g, k); T(g, ns); }
static inline void KB(struct gen *g, const char *k, int v) { K(g, k); Bo(g, v); }
static inline void KN(struct gen *g, const char *k) { K(g, k); N(g); }
static inline void ref(struct gen *g, int64_t src, int64_t line) { op(g, '['); I(g, src); I(g, line); cl(g, ']'); }
static inline void ref3(struct gen *g, int64_t src, int64_t line, int64_t ord)
{
	op(g, '['); I(g, src); I(g, line); I(g, ord); cl(g, ']');
}
static inline void nsstr(struct gen *g, const char *k, int64_t ns) /* origin + ns */
{
	K(g, k);
	Sf(g, "%lld", 1790000000000000000LL + (long long)ns);
}

/* ---- the plan: every count is fixed before anything is written */
struct plan {
	const char *preset;
	uint64_t seed;
	int64_t dur;              /* run duration, ns */
	int nreq, nprefill, ndecode, nworkers, nseries;
	int64_t events, samples, points, iterations;
	int64_t prof_events[MAXW];
	int64_t *series_points;
	int truncated_profile;
	/* source ids */
	int src_client, src_otel, src_front_log, src_worker_log0, src_tach, src_collector,
	    src_runcfg, src_nsys0, nsources;
};


enum vkind { V_INT, V_COUNTER, V_SHORT, V_FULL, V_BIG, V_SETTING, V_EVENT };

struct fam {
	const char *name, *label, *unit, *component, *group, *desc, *endpoint, *temporal;
	int kind;
};

/* Metric families (the catalog order); every family has series. */
extern const struct fam gencap_fams[];
extern const int gencap_nfams;
#define NFAM gencap_nfams
#define SETTING_POINTS 6

/* Fills p for a preset; returns 0, or -1 for an unknown preset or no memory.
 * requests > 0 replaces the preset's request count (and scales what
 * follows it); 0 keeps the preset.  p->series_points is allocated: free it
 * with gencap_plan_free. */
int gencap_plan_make(struct plan *p, const char *preset, uint64_t seed, double scale,
                     int64_t requests);
void gencap_plan_free(struct plan *p);
void gencap_worker_name(const struct plan *p, int w, char *out, size_t n);
void gencap_host_name(const struct plan *p, int w, char *out, size_t n);
void gencap_profile_file(const struct plan *p, int w, char *out, size_t n);
static inline int is_front(const struct plan *p, int w) { return w == p->nworkers - 1; }
/* CPU samples of profile w: the plan's count on the frontend, none on the
 * first (its "cpu" is null), a twentieth on every other GPU profile. */
static inline int64_t cpu_samples(const struct plan *p, int w)
{
	return is_front(p, w) ? p->samples : w == 0 ? 0 : (p->samples + 19) / 20;
}
static inline int64_t cpu_samples_total(const struct plan *p)
{
	int64_t n = 0;
	for (int w = 0; w < p->nworkers; w++)
		n += cpu_samples(p, w);
	return n;
}
static inline int series_fam(int s) { return s % NFAM; }
static inline int series_worker(const struct plan *p, int s) { return s / NFAM % p->nworkers; }
static inline int series_rank(const struct plan *p, int s) { return s / (NFAM * p->nworkers); }

/* Writes "meta" .. "server_spans" (everything before "metrics"); returns 0
 * or -1 when out of memory. */
int gencap_emit_head(struct gen *g, const struct plan *p);

#endif
