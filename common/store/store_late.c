/* store_late: SQL on its own thread after the load (see store_late.h). */
#include "store/store_late.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct store_late {
	sqlite3 *db;
	const char *const *sql;
	char *path;         /* owned: names the file in an error */
	pthread_t thread;
	int rc;             /* the thread's result */
	struct err err;     /* its error, when rc != 0 */
};

/* "cannot write PATH (what): SQLite's message (errno's)" */
static int db_fail(sqlite3 *db, const char *path, const char *what,
                   struct err *e)
{
	int sys = sqlite3_system_errno(db);

	if (sys)
		return err_set(e, ERR_DATA, "cannot write %s (%s): %s (%s)", path,
		               what, sqlite3_errmsg(db), strerror(sys));
	return err_set(e, ERR_DATA, "cannot write %s (%s): %s", path, what,
	               sqlite3_errmsg(db));
}

static void *late_main(void *arg)
{
	struct store_late *l = arg;
	size_t k = 0;
	int fd = open(l->path, O_RDONLY | O_CLOEXEC);

	/* The loaded tables are in the file now and stay as they are: start
	 * their write-back beside the web phase, so that the settle's fsync
	 * finds little left to wait for (a hint: an error shows again at
	 * that fsync). */
	if (fd >= 0) {
		sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		close(fd);
	}
	while (l->sql[k] &&
	       sqlite3_exec(l->db, l->sql[k], NULL, NULL, NULL) == SQLITE_OK)
		k++;
	if (l->sql[k])
		l->rc = db_fail(l->db, l->path, "late indexes", &l->err);
	return NULL;
}

/* Starts sql[] on db in a new thread; *out is the caller's, for
 * store_late_wait. */
static int late_start(sqlite3 *db, const char *path, const char *const *sql,
                      struct store_late **out, struct err *e)
{
	struct store_late *l = calloc(1, sizeof *l);

	*out = NULL;
	if (!l)
		return err_set(e, ERR_NOMEM, "out of memory");
	l->db = db;
	l->sql = sql;
	l->path = strdup(path);
	err_clear(&l->err);
	if (!l->path) {
		free(l);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	if (pthread_create(&l->thread, NULL, late_main, l) != 0) {
		free(l->path);
		free(l);
		return err_set(e, ERR_DATA, "cannot start a thread for %s",
		               path);
	}
	*out = l;
	return 0;
}

int store_late_wait(struct store_late *l, int stop, struct err *e)
{
	int rc;

	if (!l)
		return 0;
	if (stop)
		sqlite3_interrupt(l->db);
	pthread_join(l->thread, NULL);
	rc = stop ? 0 : l->rc;
	if (rc)
		*e = l->err;
	free(l->path);
	free(l);
	return rc;
}

int store_late_open_reader(const char *path, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY |
	                         SQLITE_OPEN_NOMUTEX, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(*db, STORE_LATE_BUSY_MS);
	return rc;
}

int store_late_begin(sqlite3 *db, const char *path, const char *const *sql,
                     struct store_late **out, struct err *e)
{
	/* The read sets up the WAL's shared index now, before any reader
	 * opens the file; a reader that had to would lock the writer out
	 * for a moment (the busy timeout covers what remains). */
	sqlite3_busy_timeout(db, STORE_LATE_BUSY_MS);
	if (sqlite3_exec(db, "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL;"
	                 " SELECT count(*) FROM sqlite_schema", NULL, NULL,
	                 NULL) != SQLITE_OK)
		return db_fail(db, path, "journal mode", e);
	return late_start(db, path, sql, out, e);
}

int store_late_settle(struct store_late *l, sqlite3 **db, const char *path,
                      const char *const *sql, int scratch, struct err *e)
{
	int rc = store_late_wait(l, 0, e), fd;

	if (rc)
		return rc;
	for (size_t k = 0; !l && sql && sql[k]; k++)
		if (sqlite3_exec(*db, sql[k], NULL, NULL, NULL) != SQLITE_OK)
			return db_fail(*db, path, "late indexes", e);
	/* In NORMAL locking mode the exclusive lock is released with the next
	 * access; close the connection so every page reaches the file. */
	if (sqlite3_exec(*db, "PRAGMA journal_mode=DELETE;"
	                 " PRAGMA locking_mode=NORMAL", NULL, NULL,
	                 NULL) != SQLITE_OK)
		return db_fail(*db, path, "journal mode", e);
	if (sqlite3_close(*db) != SQLITE_OK)
		return db_fail(*db, path, "close", e);
	*db = NULL;
	if (scratch) /* read once more, then removed: not worth a sync */
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		err_sys(e, ERR_DATA, "cannot sync %s", path);
		if (fd >= 0)
			close(fd);
		return e->code;
	}
	close(fd);
	return 0;
}
