/* capabilities: which views have usable data (see capabilities.h). */
#include "ingest/capabilities.h"

#include <string.h>

static int str_is(const json_t *obj, const char *key, const char *want)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static int nonempty(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_array(v) && json_array_size(v) > 0;
}

static int count_of(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_integer(v) && json_integer_value(v) > 0;
}

json_t *capabilities_compute(const json_t *catalog,
                              const uint64_t *series_points, size_t nseries)
{
	const json_t *reqs = json_object_get(catalog, "requests");
	const json_t *metrics = json_object_get(catalog, "metrics");
	const json_t *profiles = json_object_get(catalog, "profiles");
	const json_t *v;
	int breakdown = 0, spans = nonempty(catalog, "server_spans");
	int any_points = 0, worker = 0, hardware = 0, nvtx = 0, cpu = 0;
	int gpu = 0;
	size_t i;

	json_array_foreach(reqs, i, v) {
		const json_t *lc = json_object_get(v, "lifecycle");
		if (json_is_true(json_object_get(lc, "available")))
			breakdown = 1;
		if (nonempty(v, "spans"))
			spans = 1;
	}
	json_array_foreach(metrics, i, v) {
		if (i >= nseries || !series_points || series_points[i] == 0)
			continue;
		any_points = 1;
		if (str_is(v, "component", "Workers") || str_is(v, "group", "worker"))
			worker = 1;
		if (str_is(v, "component", "GPU") || str_is(v, "component", "Host") ||
		    str_is(v, "group", "hardware"))
			hardware = 1;
	}
	json_array_foreach(profiles, i, v) {
		if (count_of(v, "event_count"))
			nvtx = 1;
		if (count_of(json_object_get(v, "cpu"), "sample_count"))
			cpu = 1;
		if (count_of(json_object_get(v, "gpu"), "rows"))
			gpu = 1;
	}
	json_t *caps = json_pack("{sbsbsbsbsbsbsbsbsbsb}",
	                 "requests", json_is_array(reqs) && json_array_size(reqs) > 0,
	                 "request_breakdown", breakdown,
	                 "server_activity", spans,
	                 "metrics", nonempty(catalog, "metric_catalog") || any_points,
	                 "worker_metrics", worker,
	                 "hardware_metrics", hardware,
	                 "nvtx", nvtx,
	                 "cpu_samples", cpu,
	                 "nsight", nvtx || cpu,
	                 "iterations", nonempty(catalog, "iterations"));
	/* only when true: documents and reports without GPU rows keep the
	 * capabilities of the evidence format exactly */
	if (caps && gpu && json_object_set_new(caps, "gpu", json_true()) != 0) {
		json_decref(caps);
		caps = NULL;
	}
	return caps;
}

