/* gencap plan: counts, metric families and names (see gencap.h). */
#include <math.h>

#include "gencap.h"

const struct fam gencap_fams[] = {
	{"frontend_requests_inflight", "Frontend in-flight requests", "requests", "Frontend", "Frontend",
	 "Requests accepted by the HTTP frontend and not finished.", "frontend", NULL, V_INT},
	{"gpu_memory_used_bytes", "GPU memory used", "bytes", "GPU", "hardware",
	 "Device memory in use.", "dcgm", NULL, V_BIG},
	{"gpu_power_watts", "GPU power", "W", "GPU", "hardware", "Board power draw.", "dcgm", NULL, V_FULL},
	{"gpu_utilization", "GPU utilization", "percent", "GPU", "hardware", "Device busy fraction.",
	 "dcgm", NULL, V_SHORT},
	{"host_cpu_percent", "Host CPU", "percent", "Host", "hardware", "Host CPU busy percentage.",
	 "node", NULL, V_FULL},
	{"kv_cache_usage_perc", "KV cache usage", "fraction", "Workers", "Engine scheduling",
	 "Fraction of KV cache blocks in use.", "decode", NULL, V_FULL},
	{"log_batch_running", "Running in batch", "requests", "Workers", "Log-derived metrics",
	 "Batch occupancy from engine logs.", "worker_log", "sample", V_INT},
	{"log_decode_request_limit", "Decode request limit", "requests", "Workers", "Log-derived metrics",
	 "Configured scheduler limit.", "worker_log", "setting", V_SETTING},
	{"log_max_num_tokens", "Max batch tokens", "tokens", "Workers", "Log-derived metrics",
	 "Configured token budget per batch.", "worker_log", "setting", V_SETTING},
	{"log_request_queue_ms", "Request queue time", "ms", "Workers", "Log-derived metrics",
	 "Per-request queueing delay.", "worker_log", "event", V_EVENT},
	{"num_requests_running", "Running requests", "requests", "Workers", "Engine scheduling",
	 "Requests in the running batch.", "decode", NULL, V_INT},
	{"prompt_tokens_total", "Prompt tokens", "tokens", "Workers", "Engine throughput",
	 "Prompt tokens processed since start.", "decode", NULL, V_COUNTER},
	{"num_requests_waiting", "Waiting requests", "requests", "Workers", "Engine scheduling",
	 "Requests waiting for a batch slot.", "decode", NULL, V_INT},
};
const int gencap_nfams = (int)(sizeof gencap_fams / sizeof gencap_fams[0]);

void gencap_worker_name(const struct plan *p, int w, char *out, size_t n)
{
	if (w < p->nprefill)
		snprintf(out, n, "prefill-%d", w);
	else if (w < p->nprefill + p->ndecode)
		snprintf(out, n, "decode-%d", w - p->nprefill);
	else
		snprintf(out, n, "frontend");
}
/* GPU workers live on nodeA, nodeB, ... (skipping F); the frontend on nodeF. */
void gencap_host_name(const struct plan *p, int w, char *out, size_t n)
{
	snprintf(out, n, "node%c", is_front(p, w) ? 'F' : 'A' + w + (w >= 5));
}

int gencap_plan_make(struct plan *p, const char *preset, uint64_t seed, double scale,
                     int64_t requests)
{
	memset(p, 0, sizeof *p);
	p->preset = preset;
	p->seed = seed;
	if (!strcmp(preset, "small")) {
		p->dur = 12 * NS, p->nreq = 6, p->nprefill = 1, p->ndecode = 1, p->nseries = NFAM + 4;
		p->events = 30, p->samples = 16, p->points = 110, p->iterations = 8;
	} else if (!strcmp(preset, "medium")) {
		p->dur = 120 * NS, p->nreq = 60, p->nprefill = 1, p->ndecode = 2, p->nseries = 5 * NFAM;
		p->events = 100000, p->samples = 4000, p->points = 200000, p->iterations = 600;
	} else if (!strcmp(preset, "large")) {
		p->dur = 900 * NS, p->nreq = 406, p->nprefill = 2, p->ndecode = 5, p->nseries = 600;
		p->events = 4162788, p->samples = 200000, p->points = 7616598, p->iterations = 6000;
	} else {
		return -1;
	}
	p->nworkers = p->nprefill + p->ndecode + 1;
	p->events = llround((double)p->events * scale);
	p->samples = llround((double)p->samples * scale);
	p->points = llround((double)p->points * scale);
	/* Edge cases need a few rows per profile and series. */
	if (p->events < 8 * p->nworkers)
		p->events = 8 * p->nworkers;
	if (p->samples < 8)
		p->samples = 8;

	/* NVTX events: the frontend gets 2%, the GPU workers share the rest. */
	int64_t front = p->events / 50 < 8 ? 8 : p->events / 50, rest = p->events - front;
	int ng = p->nworkers - 1;
	for (int w = 0; w < ng; w++)
		p->prof_events[w] = rest / ng + (w < rest % ng);
	p->prof_events[ng] = front;
	p->truncated_profile = p->nprefill; /* decode-0 */

	/* Points: settings series get SETTING_POINTS, the others share the rest
	 * by random weights (cumulative rounding keeps the total exact). */
	p->series_points = calloc((size_t)p->nseries, sizeof *p->series_points);
	double *wt = calloc((size_t)p->nseries, sizeof *wt), wsum = 0;
	if (!p->series_points || !wt)
		return -1;
	struct rng r;
	rng_seed(&r, seed, 7);
	int nset = 0;
	for (int s = 0; s < p->nseries; s++) {
		if (gencap_fams[series_fam(s)].kind == V_SETTING)
			nset++;
		else
			wsum += wt[s] = 0.25 + unif(&r) * 1.5;
	}
	int64_t share = p->points - (int64_t)nset * SETTING_POINTS, done = 0;
	if (share < 4 * (p->nseries - nset))
		share = 4 * (p->nseries - nset);
	double acc = 0;
	for (int s = 0; s < p->nseries; s++) {
		if (gencap_fams[series_fam(s)].kind == V_SETTING) {
			p->series_points[s] = SETTING_POINTS;
			continue;
		}
		acc += wt[s];
		int64_t upto = (int64_t)((double)share * (acc / wsum) + 0.5);
		if (upto > share)
			upto = share;
		p->series_points[s] = upto - done;
		done = upto;
	}
	free(wt);
	p->points = share + (int64_t)nset * SETTING_POINTS;
	p->iterations = llround((double)p->iterations * scale);
	if (requests > 0) {
		/* --requests N: a load test at about 280 requests per second (the
		 * run lasts at least N * 3.6 ms), one iteration row per 4 requests;
		 * sessions, agents, spans and lifecycles follow the request count. */
		p->nreq = (int)requests;
		if (p->dur < requests * 3600000)
			p->dur = requests * 3600000;
		p->iterations = requests / 4;
	}
	if (p->iterations < 8)
		p->iterations = 8;

	p->src_client = 0, p->src_otel = 1, p->src_front_log = 2, p->src_worker_log0 = 3;
	p->src_tach = p->src_worker_log0 + ng;
	p->src_collector = p->src_tach + 1, p->src_runcfg = p->src_tach + 2;
	p->src_nsys0 = p->src_tach + 3;
	p->nsources = p->src_nsys0 + p->nworkers;
	return 0;
}

void gencap_plan_free(struct plan *p)
{
	free(p->series_points);
	p->series_points = NULL;
}

void gencap_profile_file(const struct plan *p, int w, char *out, size_t n)
{
	char wn[32], h[16];
	gencap_worker_name(p, w, wn, sizeof wn);
	gencap_host_name(p, w, h, sizeof h);
	if (is_front(p, w))
		snprintf(out, n, "%s_frontend_0.sqlite", h);
	else
		snprintf(out, n, "%s_%s_profile_rank%d.sqlite", h, wn, w);
}

