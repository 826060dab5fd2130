/* Unit tests for common/report/seriessum: the hand-over between the
 * reading thread (seriessum_scan_fine) and the writer's thread
 * (seriessum_scan_finish) when the scan has nothing to bin.
 * tests/run: tsan (threads: also run on the ThreadSanitizer build) */
#include "testlib.h"

#include "report/seriessum.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* The reading thread as the web report runs it, late: it calls
 * seriessum_scan_fine only after a pause, and says when it got there. */
struct late {
	struct seriessum_scan *sc;
	atomic_int started;
};

static void *late_fine(void *arg)
{
	struct late *l = arg;
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	atomic_store(&l->started, 1);
	seriessum_scan_fine(l->sc);
	return NULL;
}

/* seriessum_scan_finish on a scan made with fine_ahead set must wait for
 * seriessum_scan_fine, even when there is nothing to bin: the reading
 * thread calls it after the hand-over, and finish frees the scan. */
static void finish_waits_for(const char *catalog_text)
{
	json_error_t je;
	json_t *catalog = json_loads(catalog_text, 0, &je);
	struct seriessum_scan *sc = NULL;
	struct seriessum *s = NULL;
	char dir[] = "/tmp/dsight-test-seriessum-XXXXXX";
	struct shard_writer *w = NULL;
	struct shard_writer_opts o = {.dir = dir, .threads = 1};
	struct late l = {NULL, 0};
	pthread_t th;
	struct err e;

	CHECK(catalog != NULL);
	err_clear(&e);
	if (!mkdtemp(dir) || shard_writer_open(&w, &o, &e) != 0)
		abort();
	/* the cache is not opened when there is nothing to bin */
	CHECK_EQ(seriessum_scan_new(&sc, "/nonexistent/cache.sqlite", catalog,
	                            NULL, 1, &e), 0);
	CHECK(sc != NULL);
	l.sc = sc;
	CHECK_EQ(pthread_create(&th, NULL, late_fine, &l), 0);
	CHECK_EQ(seriessum_scan_finish(&s, sc, w, &e), 0);
	int started = atomic_load(&l.started);
	CHECK_EQ(started, 1); /* finish returned only after the hand-over */
	pthread_join(th, NULL);
	CHECK(s != NULL);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	{
		json_t *core = json_object();
		json_object_set_new(core, "metrics", json_array());
		CHECK_EQ(seriessum_annotate(s, w, core), 0);
		CHECK(json_object_get(core, "metric_summary") == NULL);
		json_decref(core);
	}
	seriessum_free(s);
	shard_writer_free(w);
	CHECK_EQ(rmdir(dir), 0); /* nothing to bin: no shard written */
	json_decref(catalog);
}

TEST(no_metrics_finish_waits)
{
	finish_waits_for("{\"meta\": {\"duration\": 10}, \"metrics\": []}");
}

TEST(zero_duration_finish_waits)
{
	finish_waits_for("{\"meta\": {\"duration\": 0},"
	                 " \"metrics\": [{\"name\": \"kv_cache\"}]}");
}

/* A caller that gives up (seriessum_scan_stop) joins the reading thread
 * and then frees the scan. */
TEST(stop_then_free)
{
	json_error_t je;
	json_t *catalog = json_loads("{\"meta\": {\"duration\": 10}, \"metrics\": []}", 0, &je);
	struct seriessum_scan *sc = NULL;
	struct late l = {NULL, 0};
	pthread_t th;
	struct err e;

	err_clear(&e);
	CHECK_EQ(seriessum_scan_new(&sc, "/nonexistent/cache.sqlite", catalog,
	                            NULL, 1, &e), 0);
	l.sc = sc;
	CHECK_EQ(pthread_create(&th, NULL, late_fine, &l), 0);
	seriessum_scan_stop(sc);
	pthread_join(th, NULL);
	seriessum_scan_free(sc);
	json_decref(catalog);
}

int main(void)
{
	RUN(no_metrics_finish_waits);
	RUN(zero_duration_finish_waits);
	RUN(stop_then_free);
	return testlib_done();
}
