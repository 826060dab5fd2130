/* Unit tests for common/report/lanesum: depth rows, the "deeper" fold,
 * ranking at a depth, bounds. */
#include "testlib.h"

#include "report/lanesum.h"

#include <zlib.h>

static char tmpdir[64];

static struct shard_writer *open_writer(void)
{
	struct shard_writer *w = NULL;
	struct shard_writer_opts o = {.dir = tmpdir, .threads = 1};
	struct err e;
	strcpy(tmpdir, "/tmp/dsight-test-lanesum-XXXXXX");
	if (!mkdtemp(tmpdir) || shard_writer_open(&w, &o, &e) != 0)
		abort();
	return w;
}

static void close_writer(struct shard_writer *w)
{
	char cmd[128];
	shard_writer_free(w);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		abort();
}

/* The decoded text of stream `stream`'s only shard (caller frees). */
static char *stream_text(const struct shard_writer *w, int64_t stream, uint64_t *count)
{
	size_t n = 0;
	const struct shard_desc *const *d = shard_writer_descs(w, SHARD_SUMMARY, stream, &n);
	char path[256];
	if (n != 1)
		return NULL;
	*count = d[0]->count;
	snprintf(path, sizeof path, "%s/%s.json.gz", tmpdir, d[0]->sha256);
	gzFile f = gzopen(path, "rb");
	char *out = calloc(1, d[0]->decoded_bytes + 1);
	if (!f || !out || gzread(f, out, (unsigned)d[0]->decoded_bytes) != (int)d[0]->decoded_bytes)
		abort();
	gzclose(f);
	return out;
}

TEST(depth_rows_and_deeper)
{
	struct shard_writer *w = open_writer();
	struct lanesum *ls = lanesum_new(100.0);
	struct err e;
	int written = 0;
	uint64_t count = 0;

	CHECK(ls != NULL);
	/* a root over the run, two children, a range 12 deep (folded to 8) */
	CHECK_EQ(lanesum_add(ls, 0, 0, 0, 0.0, 100.0), 0);
	CHECK_EQ(lanesum_add(ls, 0, 1, 1, 10.0, 20.0), 0);
	CHECK_EQ(lanesum_add(ls, 0, 1, 2, 20.5, 30.0), 0);
	CHECK_EQ(lanesum_add(ls, 0, 12, 3, 40.0, 41.0), 0);
	CHECK_EQ(lanesum_add(ls, 0, 1, 4, 150.0, 160.0), 0); /* outside: ignored */
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 0, &written, &e), 0);
	CHECK_EQ(written, 1);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	char *t = stream_text(w, 0, &count);
	CHECK(t != NULL);
	/* 512 root bins, 52 + 50 child bins, 6 deeper bins at level 0 */
	CHECK_EQ(count, 620);
	/* the root alone on depth 0 (inner 0 where it covers the bin), the
	 * children on depth 1, not hidden by it */
	CHECK(strstr(t, "[60,0,0,1,0,0.0,0.195313,1]") != NULL);
	CHECK(strstr(t, "[60,0,1,1,1,0.0,0.195313,1]") != NULL);
	CHECK(strstr(t, "[205,0,8,1,3,0.0,0.195313,1]") != NULL);
	CHECK(strstr(t, ",0,12,") == NULL);
	free(t);
	lanesum_free(ls);
	close_writer(w);
}

TEST(ranking_and_bounds)
{
	struct shard_writer *w = open_writer();
	struct lanesum *ls = lanesum_new(512.0); /* level 0 bins of 1 s */
	struct err e;
	int written = 1;
	uint64_t count = 0;

	/* at one depth: name 7 covers more of bin 3 than name 5 */
	CHECK_EQ(lanesum_add(ls, 2, 0, 5, 3.0, 3.25), 0);
	CHECK_EQ(lanesum_add(ls, 2, 0, 7, 3.25, 3.75), 0);
	CHECK_EQ(lanesum_add(ls, 2, 0, -1, 3.75, 3.875), 0);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 10, &written, &e), 0);
	CHECK_EQ(written, 1);
	/* a bad lane or name drops the group: nothing written */
	CHECK_EQ(lanesum_add(ls, 0, 0, 1, 1.0, 2.0), 0);
	CHECK_EQ(lanesum_add(ls, LANESUM_MAX_LANES, 0, 1, 1.0, 2.0), -1);
	CHECK_EQ(lanesum_add(ls, 0, 0, 1, 1.0, 2.0), -1);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 20, &written, &e), 0);
	CHECK_EQ(written, 0);
	CHECK_EQ(lanesum_add(ls, 0, 0, LANESUM_MAX_NAME + 1, 1.0, 2.0), -1);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 20, &written, &e), 0);
	lanesum_add(ls, 0, 0, 1, 1.0, 2.0);
	lanesum_discard(ls);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 20, &written, &e), 0);
	CHECK_EQ(written, 0);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	char *t = stream_text(w, 10, &count);
	CHECK(t != NULL);
	CHECK_EQ(count, 1);
	CHECK_STR(t, "[[3,2,0,3,7,0.5,0.5,1,5,0.25,0.25,1,-1,0.125,0.125,1]]");
	free(t);
	json_t *o = lanesum_json(512.0, w, SHARD_SUMMARY, 10);
	CHECK_EQ(json_integer_value(json_object_get(o, "version")), 2);
	CHECK_EQ(json_integer_value(json_object_get(o, "deeper")), 8);
	CHECK_EQ(json_array_size(json_object_get(o, "levels")), LANESUM_LEVELS);
	CHECK_EQ(json_array_size(json_object_get(json_array_get(json_object_get(o, "levels"), 0), "chunks")), 1);
	json_decref(o);
	lanesum_free(ls);
	close_writer(w);
}

/* A group over LANESUM_MAX_ENTRIES loses its finest level, not its bins:
 * 48 names in each of the 32768 finest bins (1 s) need 48 * (512 + 4096 +
 * 32768) accumulators; levels 0 and 1 alone fit. */
TEST(finest_level_dropped_over_bound)
{
	struct shard_writer *w = open_writer();
	double d = (double)LANESUM_BINS0 * 64;
	struct lanesum *ls = lanesum_new(d);
	struct err e;
	int written = 0, ok = 1;
	size_t n0 = 0, n1 = 0, n2 = 0;

	for (int i = 0; i < LANESUM_BINS0 * 64; i++)
		for (int k = 0; k < 48; k++)
			ok &= lanesum_add(ls, 0, 0, k, i + 0.25, i + 0.5) == 0;
	CHECK(ok);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 30, &written, &e), 0);
	CHECK_EQ(written, 1);
	/* the next group starts with every level again */
	CHECK_EQ(lanesum_add(ls, 0, 0, 1, 1.0, 2.0), 0);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 40, &written, &e), 0);
	CHECK_EQ(written, 1);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	shard_writer_descs(w, SHARD_SUMMARY, 42, &n2);
	CHECK_EQ(n2, 1);
	n2 = 0;
	shard_writer_descs(w, SHARD_SUMMARY, 30, &n0);
	shard_writer_descs(w, SHARD_SUMMARY, 31, &n1);
	shard_writer_descs(w, SHARD_SUMMARY, 32, &n2);
	CHECK(n0 > 0 && n1 > 0);
	CHECK_EQ(n2, 0);
	json_t *o = lanesum_json(d, w, SHARD_SUMMARY, 30);
	json_t *lv = json_object_get(o, "levels");
	CHECK_EQ(json_array_size(lv), 2);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(lv, 1), "bins")),
	         LANESUM_BINS0 * 8);
	json_decref(o);
	lanesum_free(ls);
	close_writer(w);
}

/* A group whose level 0 alone needs more than LANESUM_MAX_ENTRIES gets
 * no bins, even when the last add passed the bound only in the queue of
 * updates (the flush applies it), and the next group starts clean. */
TEST(level_0_over_bound_writes_nothing)
{
	struct shard_writer *w = open_writer();
	struct lanesum *ls = lanesum_new((double)LANESUM_BINS0);
	struct err e;
	int written = 1, failed = 0;
	int names = (int)(LANESUM_MAX_ENTRIES / LANESUM_BINS0) + 1;

	/* one range per (bin, name), each inside one finest bin: level 0
	 * alone makes names * 512 accumulators */
	for (int i = 0; i < LANESUM_BINS0 && !failed; i++)
		for (int k = 0; k < names && !failed; k++)
			failed = lanesum_add(ls, 0, 0, k, i + 0.01, i + 0.02) != 0;
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 50, &written, &e), 0);
	CHECK_EQ(written, 0);
	CHECK_EQ(lanesum_add(ls, 0, 0, 1, 1.0, 2.0), 0);
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 60, &written, &e), 0);
	CHECK_EQ(written, 1);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	size_t n = 1;
	shard_writer_descs(w, SHARD_SUMMARY, 50, &n);
	CHECK_EQ(n, 0);
	lanesum_free(ls);
	close_writer(w);
}

/* A new group with fewer updates than the queue holds: the flush applies
 * them, making the table there (it crashed on a one-range Nsight export
 * when the flush kept the table pointer from before). */
TEST(few_updates_flushed)
{
	struct shard_writer *w = open_writer();
	struct lanesum *ls = lanesum_new((double)LANESUM_BINS0 * 64); /* finest: 1 s */
	struct err e;
	int written = 0;
	uint64_t count = 0;

	CHECK_EQ(lanesum_add(ls, 1, 0, 4, 1.25, 1.5), 0); /* one bin a level */
	CHECK_EQ(lanesum_flush(ls, w, SHARD_SUMMARY, 70, &written, &e), 0);
	CHECK_EQ(written, 1);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	char *t = stream_text(w, 72, &count);
	CHECK(t != NULL);
	CHECK_EQ(count, 1);
	CHECK_STR(t, "[[1,1,0,1,4,0.25,0.25,1]]");
	free(t);
	lanesum_free(ls);
	close_writer(w);
}

int main(void)
{
	RUN(depth_rows_and_deeper);
	RUN(ranking_and_bounds);
	RUN(finest_level_dropped_over_bound);
	RUN(level_0_over_bound_writes_nothing);
	RUN(few_updates_flushed);
	return testlib_done();
}
