/*
 * test_dataset: opening datasets (errors, report directories, versions),
 * the generation check on a cache rewritten in place, read-only opens that
 * leave the file untouched, and clones on worker threads.
 * tests/run: tsan (threads: also run on the ThreadSanitizer build)
 */
#include <pthread.h>

#include "querylib.h"

/* ---- clones on threads ---- */

struct worker {
	struct dataset *ds;
	const char *want[4];
	int bad;
};

static const char *const thread_kinds[4] = {"nsys", "metrics", "cpu",
                                            "requests"};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int r = 0; r < 50; r++) {
		for (int k = 0; k < 4; k++) {
			struct query_params p;
			struct buf b;
			struct err e;
			query_params_init(&p);
			p.kind = thread_kinds[k];
			p.points = 1;
			p.name = k == 0 ? "ÜNICODE" : NULL;
			buf_init(&b, 0);
			if (query_run(w->ds, &p, &b, &e) || strcmp(b.data, w->want[k]))
				w->bad++;
			buf_free(&b);
		}
	}
	return NULL;
}

TEST(clones_answer_on_worker_threads)
{
	struct pair pr = open_pair(FIXTURE);
	for (int backend = 0; backend < 2; backend++) {
		struct worker w[4];
		pthread_t th[4];
		char *want[4];
		for (int k = 0; k < 4; k++) {
			struct query_params p;
			struct buf b;
			struct err e;
			query_params_init(&p);
			p.kind = thread_kinds[k];
			p.points = 1;
			p.name = k == 0 ? "ÜNICODE" : NULL;
			buf_init(&b, 0);
			CHECK_EQ(query_run(pr.ds[backend], &p, &b, &e), 0);
			want[k] = buf_detach(&b, NULL);
		}
		for (int t = 0; t < 4; t++) {
			struct err e;
			memset(&w[t], 0, sizeof w[t]);
			CHECK_EQ(dataset_clone(pr.ds[backend], &w[t].ds, &e), 0);
			for (int k = 0; k < 4; k++)
				w[t].want[k] = want[k];
		}
		/* the clones outlive the original handle */
		if (backend == 0) {
			dataset_close(pr.ds[0]);
			pr.ds[0] = NULL;
		}
		for (int t = 0; t < 4; t++)
			CHECK_EQ(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
		for (int t = 0; t < 4; t++) {
			pthread_join(th[t], NULL);
			CHECK_EQ(w[t].bad, 0);
			dataset_close(w[t].ds);
		}
		for (int k = 0; k < 4; k++)
			free(want[k]);
	}
	close_pair(&pr);
}

/* ---- opening ---- */

TEST(open_errors)
{
	struct dataset *ds = NULL;
	struct err e;
	const char *junk = tmp_path("junk.bin");
	const char *dir = tmp_path("emptydir");
	const char *v2 = tmp_path("v2.sqlite");

	err_clear(&e);
	CHECK_EQ(dataset_open(tmp_path("missing"), &ds, &e), ERR_DATA);
	CHECK(strstr(e.msg, "No such file or directory") != NULL);
	write_file(junk, "PK\3\4 not a dataset at all");
	CHECK_EQ(dataset_open(junk, &ds, &e), ERR_DATA);
	CHECK(strstr(e.msg, "is neither a DSight SQLite cache nor an evidence "
	                    "document") != NULL);
	mkdir(dir, 0755);
	CHECK_EQ(dataset_open(dir, &ds, &e), ERR_DATA);
	CHECK(strstr(e.msg, "neither trace-data.sqlite nor "
	                    "trace-data.json.gz") != NULL);
	CHECK_EQ(mkcache(FIXTURE, v2, 2, "0123456789abcdef0123456789abcdef"), 0);
	CHECK_EQ(dataset_open(v2, &ds, &e), ERR_DATA);
	CHECK(strncmp(e.msg, "Unsupported DSight SQLite version: 2; expected 1",
	              48) == 0);
	CHECK(strstr(e.msg, "rebuild") != NULL);
	CHECK(ds == NULL);
}

TEST(report_directory_prefers_sqlite)
{
	struct dataset *ds = NULL;
	struct err e;
	const char *dir = tmp_path("report");
	char path[512];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/trace-data.sqlite", dir);
	CHECK_EQ(mkcache(FIXTURE, path, 1, "feedfeedfeedfeedfeedfeedfeedfeed"), 0);
	CHECK_EQ(dataset_open(dir, &ds, &e), 0);
	CHECK_STR(dataset_generation(ds), "feedfeedfeedfeedfeedfeedfeedfeed");
	CHECK(strstr(dataset_data_path(ds), "trace-data.sqlite") != NULL);
	dataset_close(ds);
	CHECK_EQ(dataset_open(FIXTURE, &ds, &e), 0);
	CHECK_EQ(strlen(dataset_generation(ds)), 32);
	dataset_close(ds);
}

TEST(fileid_is_the_file_opened)
{
	struct dataset *ds = NULL;
	struct err e;
	struct fileid now;
	const char *dir = tmp_path("report-id");
	char path[512], moved[512];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/trace-data.sqlite", dir);
	snprintf(moved, sizeof moved, "%s/old.sqlite", dir);
	CHECK_EQ(mkcache(FIXTURE, path, 1, "feedfeedfeedfeedfeedfeedfeedfeed"), 0);
	CHECK_EQ(dataset_open(dir, &ds, &e), 0);
	CHECK_EQ(fileid_get(dataset_data_path(ds), &now, &e), 0);
	CHECK(fileid_equal(&now, dataset_fileid(ds)));
	/* A rebuild replaces the file: the identity no longer matches. */
	CHECK_EQ(rename(path, moved), 0);
	CHECK_EQ(mkcache(FIXTURE, path, 1, "beefbeefbeefbeefbeefbeefbeefbeef"), 0);
	CHECK_EQ(fileid_get(dataset_data_path(ds), &now, &e), 0);
	CHECK(!fileid_equal(&now, dataset_fileid(ds)));
	dataset_close(ds);
}

TEST(cache_rewritten_in_place_is_detected)
{
	struct dataset *ds = NULL, *clone = NULL;
	struct err e;
	struct buf b;
	struct query_params p;
	const char *cache = tmp_path("rewritten.sqlite");
	sqlite3 *db;

	CHECK_EQ(mkcache(FIXTURE, cache, 1, "11111111111111111111111111111111"), 0);
	CHECK_EQ(dataset_open(cache, &ds, &e), 0);
	CHECK_EQ(dataset_clone(ds, &clone, &e), 0);
	query_params_init(&p);
	p.kind = "nsys";
	buf_init(&b, 0);
	CHECK_EQ(query_run(ds, &p, &b, &e), 0);
	/* rewrite the generation in place with a second connection */
	CHECK_EQ(sqlite3_open(cache, &db), SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE catalog SET generation = "
	                       "'22222222222222222222222222222222'",
	                   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	const char *kinds[] = {"nsys", "cpu", "metrics"};
	for (int k = 0; k < 3; k++) {
		p.kind = kinds[k];
		buf_reset(&b);
		err_clear(&e);
		CHECK_EQ(query_run(ds, &p, &b, &e), ERR_REBUILT);
		CHECK_STR(e.msg, "DSight dataset was rebuilt; reopen it before "
		                 "querying");
		err_clear(&e);
		CHECK_EQ(query_run(clone, &p, &b, &e), ERR_REBUILT);
	}
	buf_free(&b);
	dataset_close(ds);
	dataset_close(clone);
}

TEST(readonly_open_keeps_mtime_and_files)
{
	struct dataset *ds = NULL;
	struct err e;
	struct stat before, after, journal;
	const char *dir = tmp_path("ro");
	char cache[512], side[600];
	struct query_params p;
	struct buf b;

	mkdir(dir, 0755);
	snprintf(cache, sizeof cache, "%s/trace-data.sqlite", dir);
	CHECK_EQ(mkcache(FIXTURE, cache, 1, "33333333333333333333333333333333"), 0);
	{
		struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
		CHECK_EQ(utimensat(AT_FDCWD, cache, ts, 0), 0);
	}
	CHECK_EQ(stat(cache, &before), 0);
	CHECK_EQ(dataset_open(dir, &ds, &e), 0);
	buf_init(&b, 0);
	for (size_t ki = 0; ki < query_kind_count; ki++) {
		const char *const *k = &query_kind_table[ki].name;
		query_params_init(&p);
		p.kind = *k;
		p.request_id = "req-001";
		p.points = 1;
		p.has_bucket = 1; /* timeline needs one; others ignore it */
		p.bucket = 1;
		p.sql = "SELECT count(*) FROM events";
		buf_reset(&b);
		/* this minimal cache has no views: sql refuses it */
		CHECK_EQ(query_run(ds, &p, &b, &e),
		         strcmp(*k, "sql") ? 0 : ERR_USAGE);
	}
	buf_free(&b);
	dataset_close(ds);
	CHECK_EQ(stat(cache, &after), 0);
	CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	      after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	CHECK_EQ(after.st_size, before.st_size);
	snprintf(side, sizeof side, "%s-journal", cache);
	CHECK_NE(stat(side, &journal), 0);
	snprintf(side, sizeof side, "%s-wal", cache);
	CHECK_NE(stat(side, &journal), 0);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(clones_answer_on_worker_threads);
	RUN(open_errors);
	RUN(report_directory_prefers_sqlite);
	RUN(fileid_is_the_file_opened);
	RUN(cache_rewritten_in_place_is_detected);
	RUN(readonly_open_keeps_mtime_and_files);
	return querylib_done();
}
