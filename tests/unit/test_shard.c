/* Unit tests for common/shard: the cut rule, descriptors, names, density. */
#include "testlib.h"

#include "report/shard.h"

#include <openssl/evp.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/dsight-test-shard-XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
}

static void rmtmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		abort();
}

static struct shard_writer *open_writer(int threads)
{
	struct shard_writer *w = NULL;
	struct shard_writer_opts o = {.dir = tmpdir, .threads = threads};
	struct err e;
	if (shard_writer_open(&w, &o, &e) != 0)
		abort();
	return w;
}

static int event(struct shard_writer *w, int64_t profile, double start,
                 double end, const char *tid, int64_t row)
{
	struct row_event ev = {start, end, 0, tid, strlen(tid), row};
	struct err e;
	return shard_writer_event(w, profile, row, &ev, &e);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* Reads and gunzips a shard file; returns the decoded text (caller frees). */
static char *read_shard(const struct shard_desc *d, size_t *len, size_t *zlen,
                        unsigned char head[10])
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s.json.gz", tmpdir, d->sha256);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *z = malloc(d->bytes + 16);
	*zlen = fread(z, 1, d->bytes + 16, f);
	fclose(f);
	memcpy(head, z, 10);
	size_t cap = d->decoded_bytes + 16;
	char *out = malloc(cap);
	z_stream s;
	memset(&s, 0, sizeof s);
	inflateInit2(&s, 15 + 16);
	s.next_in = z;
	s.avail_in = (uInt)*zlen;
	s.next_out = (Bytef *)out;
	s.avail_out = (uInt)cap;
	int rc = inflate(&s, Z_FINISH);
	inflateEnd(&s);
	free(z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*len = cap - s.avail_out;
	out[*len < cap ? *len : cap - 1] = 0;
	return out;
}

static void sha_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int l;
	EVP_Digest(p, n, md, &l, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

TEST(cut_at_8192_rows)
{
	struct err e;
	size_t n;
	mktmp();
	struct shard_writer *w = open_writer(1);
	for (int i = 0; i < 8192 * 2 + 1; i++)
		CHECK_EQ(event(w, 0, i * 0.001, i * 0.001 + 0.5, "7", i), 0);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	const struct shard_desc *const *d = shard_writer_descs(w, SHARD_EVENTS, 0, &n);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK_EQ(d[0]->count, 8192);
		CHECK_EQ(d[1]->count, 8192);
		CHECK_EQ(d[2]->count, 1);
	}
	CHECK_EQ(shard_writer_total(w), 3);
	shard_writer_free(w);
	rmtmp();
}

TEST(cut_at_512_kib_exactly)
{
	/* row = [0.5,1.5,0,"<tid>",7]: 16 + tid bytes.  With 1386-byte rows,
	 * 2 + 378 * 1387 == 524288: 378 rows fill the budget exactly. */
	struct err e;
	size_t n, len, zlen;
	unsigned char head[10];
	char *tid = repeat('x', 1370);
	mktmp();
	struct shard_writer *w = open_writer(0);
	for (int i = 0; i < 379; i++)
		CHECK_EQ(event(w, 2, 0.5, 1.5, tid, 7), 0);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	const struct shard_desc *const *d = shard_writer_descs(w, SHARD_EVENTS, 2, &n);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(d[0]->count, 378);
		CHECK_EQ(d[0]->decoded_bytes, 524287);
		CHECK_EQ(d[1]->count, 1);
		CHECK_EQ(d[1]->decoded_bytes, 1388);
		char *text = read_shard(d[1], &len, &zlen, head);
		CHECK(text && len == 1388 && text[0] == '[' && text[len - 1] == ']');
		CHECK(text && memcmp(text, "[[0.5,1.5,0,\"xx", 15) == 0);
		free(text);
	}
	free(tid);
	shard_writer_free(w);
	rmtmp();
}

TEST(oversized_row_alone)
{
	struct err e;
	size_t n, len, zlen;
	unsigned char head[10];
	char *big = repeat('y', 600000);
	mktmp();
	struct shard_writer *w = open_writer(1);
	CHECK_EQ(event(w, 0, 1.0, 2.0, "1", 0), 0);
	CHECK_EQ(event(w, 0, 1.5, 2.5, big, 1), 0);
	CHECK_EQ(event(w, 0, 3.0, 4.0, "1", 2), 0);
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	const struct shard_desc *const *d = shard_writer_descs(w, SHARD_EVENTS, 0, &n);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK(d[0]->count == 1 && d[1]->count == 1 && d[2]->count == 1);
		CHECK_EQ(d[1]->decoded_bytes, 600000 + 16 + 2);
		char *text = read_shard(d[1], &len, &zlen, head);
		CHECK(text && len == 600018);
		free(text);
	}
	free(big);
	shard_writer_free(w);
	rmtmp();
}

TEST(descriptor_fields_and_bounds)
{
	struct err e;
	size_t n, len, zlen;
	unsigned char head[10];
	char sha[65];
	mktmp();
	struct shard_writer *w = open_writer(1);
	CHECK_EQ(event(w, 0, 1.0, 5.0, "12", 3), 0);
	CHECK_EQ(event(w, 0, 0.5, 9.0, "12", 4), 0);
	CHECK_EQ(event(w, 0, 2.0, 3.0, "\xc3\xa9", 5), 0);
	struct row_sample s1 = {4.0, "9", 1, 2, 10}, s2 = {1.25, "9", 1, 0, 11};
	CHECK_EQ(shard_writer_sample(w, 0, 0, &s1, &e), 0);
	CHECK_EQ(shard_writer_sample(w, 0, 1, &s2, &e), 0);
	struct row_point p1 = {0.5, {NUM_INT, 1, 1.0, NULL, 0}, 3, 0, NULL, 0, 0, 0};
	struct row_point p2 = {2.0, {NUM_NULL, 0, 0, NULL, 0}, 3, 1, NULL, 0, 0, 0};
	const char *bigtxt = "18446744073709551617";
	struct row_point p3 = {2.0, {NUM_BIG, 0, 1.8e19, bigtxt, strlen(bigtxt)}, 3, 2, NULL, 0, 0, 0};
	struct row_point p4 = {-1.0, {NUM_REAL, 0, 2.0, NULL, 0}, 3, 3, NULL, 0, 0, 0};
	CHECK_EQ(shard_writer_point(w, 1, 0, &p1, &e), 0);
	CHECK_EQ(shard_writer_point(w, 1, 1, &p2, &e), 0);
	CHECK_EQ(shard_writer_point(w, 1, 2, &p3, &e), 0);
	CHECK_EQ(shard_writer_point(w, 1, 3, &p4, &e), 0);
	CHECK_EQ(shard_writer_finish(w, &e), 0);

	const struct shard_desc *const *d = shard_writer_descs(w, SHARD_EVENTS, 0, &n);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(d[0]->count, 3);
		CHECK(d[0]->bounds[0] == 0.5 && d[0]->bounds[1] == 3.0);
		CHECK(d[0]->bounds[2] == 2.0 && d[0]->bounds[3] == 9.0);
		char *text = read_shard(d[0], &len, &zlen, head);
		CHECK_STR(text, "[[1.0,5.0,0,\"12\",3],[0.5,9.0,0,\"12\",4],"
		                "[2.0,3.0,0,\"\xc3\xa9\",5]]");
		CHECK(len == d[0]->decoded_bytes && zlen == d[0]->bytes);
		/* gzip magic, deflate, zero mtime */
		CHECK(head[0] == 0x1f && head[1] == 0x8b && head[2] == 8);
		CHECK(head[4] == 0 && head[5] == 0 && head[6] == 0 && head[7] == 0);
		sha_hex(text, len, sha);
		CHECK_STR(sha, d[0]->decoded_sha256);
		free(text);

		json_t *j = shard_desc_json(d[0]);
		char *s = json_dumps(j, JSON_COMPACT);
		char want[512];
		snprintf(want, sizeof want,
		         "{\"url\":\"detail/%s.json.gz\",\"sha256\":\"%s\","
		         "\"decoded_sha256\":\"%s\",\"bytes\":%llu,\"decoded_bytes\":%llu,"
		         "\"count\":3,\"bounds\":[0.5,3.0,2.0,9.0]}",
		         d[0]->sha256, d[0]->sha256, d[0]->decoded_sha256,
		         (unsigned long long)d[0]->bytes,
		         (unsigned long long)d[0]->decoded_bytes);
		CHECK_STR(s, want);
		free(s);
		json_decref(j);
	}
	d = shard_writer_descs(w, SHARD_SAMPLES, 0, &n);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(d[0]->bounds[0] == 1.25 && d[0]->bounds[1] == 1.25);
		CHECK(d[0]->bounds[2] == 4.0 && d[0]->bounds[3] == 4.0);
		char *text = read_shard(d[0], &len, &zlen, head);
		CHECK_STR(text, "[[4.0,\"9\",2,10],[1.25,\"9\",0,11]]");
		free(text);
	}
	d = shard_writer_descs(w, SHARD_POINTS, 1, &n);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(d[0]->bounds[0] == -1.0 && d[0]->bounds[3] == 2.0);
		char *text = read_shard(d[0], &len, &zlen, head);
		CHECK_STR(text, "[[0.5,1,3,0],[2.0,null,3,1],"
		                "[2.0,18446744073709551617,3,2],[-1.0,2.0,3,3]]");
		free(text);
		/* the file on disk is named by the hash of its bytes */
		char path[256];
		struct stat stt;
		snprintf(path, sizeof path, "%s/%s.json.gz", tmpdir, d[0]->sha256);
		CHECK(stat(path, &stt) == 0 && (uint64_t)stt.st_size == d[0]->bytes);
	}
	shard_writer_descs(w, SHARD_POINTS, 0, &n);
	CHECK_EQ(n, 0);
	json_t *a = shard_writer_descs_json(w, SHARD_POINTS, 7);
	CHECK(json_is_array(a) && json_array_size(a) == 0);
	json_decref(a);
	shard_writer_free(w);
	rmtmp();
}

/* Feeds the same rows; returns the files list as compact JSON. */
static char *names_of_run(int threads, int order_swap)
{
	struct err e;
	struct shard_writer *w = open_writer(threads);
	for (int p = 0; p < 3; p++)
		for (int i = 0; i < 20000; i++)
			event(w, order_swap ? 2 - p : p, i * 0.01, i * 0.01 + p, "42", i);
	if (shard_writer_finish(w, &e) != 0)
		abort();
	json_t *f = shard_writer_files(w);
	char *s = json_dumps(f, JSON_COMPACT);
	json_decref(f);
	shard_writer_free(w);
	return s;
}

TEST(deterministic_names)
{
	mktmp();
	char *a = names_of_run(1, 0);
	rmtmp();
	mktmp();
	char *b = names_of_run(0, 0);
	char *c = names_of_run(1, 1); /* same shards, other profile order */
	CHECK_STR(a, b);
	CHECK_STR(a, c);
	json_t *j = json_loads(a, 0, NULL);
	CHECK_EQ(json_array_size(j), 9);
	for (size_t i = 1; i < json_array_size(j); i++)
		CHECK(strcmp(json_string_value(json_array_get(j, i - 1)),
		             json_string_value(json_array_get(j, i))) < 0);
	const char *first = json_string_value(json_array_get(j, 0));
	CHECK(first && strncmp(first, "detail/", 7) == 0 && strlen(first) == 7 + 64 + 8);
	json_decref(j);
	free(a);
	free(b);
	free(c);
	rmtmp();
}

static int nonzero(const uint64_t *b, int from, int to)
{
	for (int i = from; i <= to; i++)
		if (b[i] == 0)
			return 0;
	return 1;
}

static int zero(const uint64_t *b, int from, int to)
{
	for (int i = from; i <= to; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

TEST(density_bins)
{
	uint64_t b[SHARD_DENSITY_BINS] = {0};
	double dur = 10.0;

	/* outside [0, duration]: nothing */
	shard_density_add(b, dur, -5.0, -0.5);
	shard_density_add(b, dur, 10.5, 12.0);
	CHECK(zero(b, 0, 511));
	/* touching both edges: a root range over the whole run and beyond */
	shard_density_add(b, dur, -1.0, 12.0);
	CHECK(b[0] == 1 && b[511] == 1 && nonzero(b, 0, 511));
	memset(b, 0, sizeof b);
	/* end exactly 0 and start exactly duration count at the edges */
	shard_density_add(b, dur, -1.0, 0.0);
	shard_density_add(b, dur, 10.0, 11.0);
	CHECK(b[0] == 1 && b[511] == 1 && zero(b, 1, 510));
	memset(b, 0, sizeof b);
	/* floor(start*512/dur)..floor(end*512/dur): 1.0 -> 51.2 -> 51, 2.0 -> 102 */
	shard_density_add(b, dur, 1.0, 2.0);
	CHECK(b[50] == 0 && b[51] == 1 && b[102] == 1 && b[103] == 0);
	CHECK(nonzero(b, 51, 102));
	/* zero-length event: one bin */
	shard_density_add(b, dur, 5.0, 5.0);
	CHECK(b[256] == 1 && b[255] == 0 && b[257] == 0);
}

TEST(density_in_stream_and_from_db)
{
	struct err e;
	uint64_t live[SHARD_DENSITY_BINS], fromdb[2 * SHARD_DENSITY_BINS];
	double ev[][2] = {{-1.0, 12.0}, {0.0, 0.0}, {9.99, 10.0}, {11, 12}, {-3, -2}, {2.5, 7.5}};
	sqlite3 *db;
	mktmp();
	struct shard_writer *w = open_writer(1);
	shard_writer_set_duration(w, 10.0);
	CHECK_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	sqlite3_exec(db, "CREATE TABLE events (profile INTEGER, ordinal INTEGER, bucket INTEGER,"
	                 " start REAL, end REAL, name INTEGER, tid TEXT, source_row INTEGER,"
	                 " PRIMARY KEY (profile, ordinal)) WITHOUT ROWID", NULL, NULL, NULL);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(event(w, 1, ev[i][0], ev[i][1], "5", i), 0);
		char sql[256];
		snprintf(sql, sizeof sql, "INSERT INTO events VALUES (1, %d, 0, %.17g, %.17g, 0, '5', %d)",
		         i, ev[i][0], ev[i][1], i);
		CHECK_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	CHECK(shard_writer_has_density(w));
	shard_writer_density(w, 1, live);
	CHECK(live[0] == 2 && live[511] == 2 && live[200] == 2 && live[100] == 1);
	CHECK_EQ(shard_density_from_db(db, 10.0, 2, fromdb, &e), 0);
	CHECK_EQ(memcmp(live, fromdb + SHARD_DENSITY_BINS, sizeof live), 0);
	CHECK(zero(fromdb, 0, 511));
	shard_writer_density(w, 0, live);
	CHECK(zero(live, 0, 511));
	/* a profile index beyond the given count is an error, not a crash */
	CHECK_EQ(shard_density_from_db(db, 10.0, 1, fromdb, &e), ERR_DATA);
	sqlite3_close(db);
	shard_writer_free(w);
	rmtmp();
}

TEST(density_late_duration)
{
	struct err e;
	mktmp();
	struct shard_writer *w = open_writer(0);
	CHECK_EQ(event(w, 0, 1.0, 2.0, "5", 0), 0);
	shard_writer_set_duration(w, 10.0); /* too late */
	CHECK_EQ(shard_writer_finish(w, &e), 0);
	CHECK(!shard_writer_has_density(w));
	shard_writer_free(w);
	rmtmp();
}

TEST(unwritable_dir_fails_cleanly)
{
	struct err e;
	struct shard_writer *w = NULL;
	struct shard_writer_opts o = {.dir = "/nonexistent/dsight", .threads = 1};
	CHECK_EQ(shard_writer_open(&w, &o, &e), 0);
	for (int i = 0; i < 9000; i++)
		if (event(w, 0, 0.0, 1.0, "1", i) != 0)
			break;
	CHECK_EQ(shard_writer_finish(w, &e), ERR_DATA);
	CHECK(strstr(e.msg, "/nonexistent/dsight") != NULL);
	shard_writer_free(w);
}

int main(void)
{
	RUN(cut_at_8192_rows);
	RUN(cut_at_512_kib_exactly);
	RUN(oversized_row_alone);
	RUN(descriptor_fields_and_bounds);
	RUN(deterministic_names);
	RUN(density_bins);
	RUN(density_in_stream_and_from_db);
	RUN(density_late_duration);
	RUN(unwritable_dir_fails_cleanly);
	return testlib_done();
}
