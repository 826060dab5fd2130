/* nsys_launch: the launch link (see nsys_launch.h). */
#include "ingest/nsys_launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/strdict.h"
#include "base/vec.h"

/* A call as filed (the temporary file's record). */
struct filed {
	int64_t pid, corr;
	struct nsys_launch_call c;
};

#define CHUNK 4096 /* records per read or write */

/* A call in the window. */
struct wcall {
	int64_t corr;
	struct nsys_launch_call c;
	int32_t proc; /* its process: index in ps */
	int32_t unsure; /* an earlier call with its key may have been dropped */
	size_t slot;  /* its hash slot */
};

/* A hash slot: the key inline, so that probing reads no ring entry. */
struct slot {
	int64_t corr;
	int32_t proc;
	int32_t at;   /* ring index, -1 empty */
};

/* Intervals covering the correlationIds dropped from the window. */
#define NDROP 32

/* What is known of one process's keys. */
struct pidstat {
	int64_t min, max;   /* correlationIds filed */
	int64_t hi;         /* the largest correlationId admitted */
	int admitted;
	int filed, ndrop;
	int64_t drop[NDROP][2]; /* sorted disjoint [lo, hi] covering every
	                           dropped correlationId (and maybe more) */
};

struct nsys_launch {
	const struct nsys_export *x;
	int fd;                  /* the calls filed, unlinked temporary file */
	struct filed *io;        /* CHUNK records being written or read */
	size_t nio, at;          /* records in io, the next one to read */
	uint64_t nfiled, nread;  /* records in the file, read from it */
	sqlite3_stmt *find;      /* the table built on first need */
	int done;
	struct strdict pids;     /* pid (8 bytes) -> index in ps */
	struct pidstat *ps;
	size_t nps, cap;
	struct {                 /* pids asked lately, by pid */
		int64_t pid;
		size_t at;       /* + 1 into ps; 0 empty */
	} recent[8];
	struct wcall *ring;      /* the window, oldest at head */
	size_t wcap, head, count;
	struct slot *hash;       /* linear probing on (proc, corr) */
	size_t mask;
};

static int sqlerr(struct nsys_launch *l, int rc, struct err *e)
{
	return nsys_export_sqlerr(l->x, rc, "linking GPU launches", e);
}

static int ioerr(struct err *e)
{
	return err_sys(e, ERR_DATA, "cannot use a temporary file for the GPU "
	               "launches");
}

/* Reads up to n records at record k of the file: the count, -1 (errno). */
static long read_at(int fd, struct filed *p, size_t n, uint64_t k)
{
	size_t want = n * sizeof *p, got = 0;
	while (got < want) {
		ssize_t r = pread(fd, (char *)p + got, want - got,
		                  (off_t)(k * sizeof *p + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (long)(got / sizeof *p);
}

static size_t home(const struct nsys_launch *l, int32_t proc, int64_t corr)
{
	uint64_t h = (uint64_t)proc * 0x9E3779B97F4A7C15u ^ (uint64_t)corr;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 32;
	return (size_t)h & l->mask;
}

/* The hash slot holding key (proc, corr), or -1. */
static long lookup(const struct nsys_launch *l, int32_t proc, int64_t corr)
{
	for (size_t i = home(l, proc, corr);; i = (i + 1) & l->mask) {
		const struct slot *k = &l->hash[i];
		if (k->at < 0)
			return -1;
		if (k->corr == corr && k->proc == proc)
			return (long)i;
	}
}

/* Empties slot i, shifting back the entries that probed past it. */
static void unhash(struct nsys_launch *l, size_t i)
{
	for (size_t j = i;;) {
		j = (j + 1) & l->mask;
		const struct slot *k = &l->hash[j];
		if (k->at < 0)
			break;
		size_t h = home(l, k->proc, k->corr);
		/* the entry at j may move to i when i lies on its probe path */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			l->hash[i] = *k;
			l->ring[k->at].slot = i;
			i = j;
		}
	}
	l->hash[i].at = -1;
}

/* The first interval of p with hi >= corr (ndrop when none). */
static int drop_at(const struct pidstat *p, int64_t corr)
{
	int lo = 0, hi = p->ndrop;
	while (lo < hi) {
		int m = (lo + hi) / 2;
		if (p->drop[m][1] < corr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* 1 when corr may have been dropped. */
static int dropped(const struct pidstat *p, int64_t corr)
{
	int i = drop_at(p, corr);
	return i < p->ndrop && p->drop[i][0] <= corr;
}

/* Records corr as dropped: a new interval while there is room, else the
 * nearer neighbour grows to it (the cover only grows). */
static void drop(struct pidstat *p, int64_t corr)
{
	int i = drop_at(p, corr);
	if (i < p->ndrop && p->drop[i][0] <= corr)
		return;
	if (p->ndrop < NDROP) {
		memmove(p->drop[i + 1], p->drop[i], (size_t)(p->ndrop - i) *
		        sizeof p->drop[0]);
		p->drop[i][0] = p->drop[i][1] = corr;
		p->ndrop++;
	} else if (i == p->ndrop || (i > 0 &&
	           (uint64_t)(corr - p->drop[i - 1][1]) <=
	           (uint64_t)(p->drop[i][0] - corr))) {
		p->drop[i - 1][1] = corr;
	} else {
		p->drop[i][0] = corr;
	}
}

static struct pidstat *stat_of(struct nsys_launch *l, int64_t pid, int create)
{
	int64_t k;
	size_t r = (size_t)(pid ^ (pid >> 8)) & 7;
	if (l->recent[r].at && l->recent[r].pid == pid)
		return &l->ps[l->recent[r].at - 1];
	if (strdict_get(&l->pids, &pid, sizeof pid, &k)) {
		l->recent[r].pid = pid;
		l->recent[r].at = (size_t)k + 1;
		return &l->ps[k];
	}
	if (!create)
		return NULL;
	if (vec_reserve_zero(&l->ps, &l->cap, l->nps + 1, sizeof *l->ps) ||
	    strdict_put(&l->pids, &pid, sizeof pid, (int64_t)l->nps))
		return NULL;
	return &l->ps[l->nps++];
}

int nsys_launch_open(const struct nsys_export *x, struct nsys_launch **out,
                     struct err *e)
{
	struct nsys_launch *l = calloc(1, sizeof *l);
	const char *w = getenv("DSIGHT_TEST_LAUNCH_WINDOW");
	const char *dir = getenv("SQLITE_TMPDIR");
	char path[4096];
	size_t n = 2;
	*out = l;
	if (!l)
		return err_set(e, ERR_NOMEM, "out of memory");
	l->x = x;
	l->fd = -1;
	strdict_init(&l->pids);
	l->wcap = w && atol(w) > 0 ? (size_t)atol(w) : NSYS_LAUNCH_WINDOW;
	while (n < 2 * l->wcap)
		n *= 2;
	l->mask = n - 1;
	l->ring = malloc(l->wcap * sizeof *l->ring);
	l->hash = malloc(n * sizeof *l->hash);
	l->io = malloc(CHUNK * sizeof *l->io);
	if (!l->ring || !l->hash || !l->io)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		l->hash[i].at = -1;
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/dsight-launch-XXXXXX",
	         dir && *dir ? dir : "/tmp");
	if ((l->fd = mkstemp(path)) < 0)
		return ioerr(e);
	unlink(path);
	return 0;
}

int nsys_launch_file(struct nsys_launch *l, int64_t pid, int64_t corr,
                     const struct nsys_launch_call *c, struct err *e)
{
	struct pidstat *p = stat_of(l, pid, 1);
	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (!p->filed) {
		p->min = p->max = corr;
		p->filed = 1;
	}
	p->min = corr < p->min ? corr : p->min;
	p->max = corr > p->max ? corr : p->max;
	l->io[l->nio++] = (struct filed){pid, corr, *c};
	l->nfiled++;
	if (l->nio == CHUNK) {
		if (fdio_write_all(l->fd, l->io, l->nio * sizeof *l->io))
			return ioerr(e);
		l->nio = 0;
	}
	return 0;
}

int nsys_launch_seal(struct nsys_launch *l, struct err *e)
{
	if (l->nio && fdio_write_all(l->fd, l->io, l->nio * sizeof *l->io))
		return ioerr(e);
	l->nio = l->at = 0;
	return 0;
}

/* Puts call f into the window (unless its key is there). */
static void admit(struct nsys_launch *l, const struct filed *f)
{
	struct pidstat *p = stat_of(l, f->pid, 0);
	int32_t proc = (int32_t)(p - l->ps); /* every filed pid has one */
	/* the first call filed wins (calls come mostly in key order: a key
	 * above those admitted is not there) */
	if (p->admitted && f->corr <= p->hi && lookup(l, proc, f->corr) >= 0)
		return;
	if (!p->admitted || f->corr > p->hi)
		p->hi = f->corr;
	p->admitted = 1;
	if (l->count == l->wcap) {
		struct wcall *old = &l->ring[l->head];
		unhash(l, old->slot);
		drop(&l->ps[old->proc], old->corr);
		l->head = (l->head + 1) % l->wcap;
		l->count--;
	}
	size_t at = (l->head + l->count++) % l->wcap;
	struct wcall *w = &l->ring[at];
	w->proc = proc;
	w->corr = f->corr;
	w->c = f->c;
	w->unsure = dropped(p, f->corr);
	size_t i = home(l, proc, f->corr);
	while (l->hash[i].at >= 0)
		i = (i + 1) & l->mask;
	l->hash[i] = (struct slot){f->corr, proc, (int32_t)at};
	w->slot = i;
}

/* Loads the calls filed with start <= at. */
static int load(struct nsys_launch *l, int64_t at, struct err *e)
{
	while (!l->done) {
		if (l->at == l->nio) {
			long n = read_at(l->fd, l->io, CHUNK, l->nread);
			if (n < 0)
				return ioerr(e);
			l->nread += (uint64_t)n;
			l->nio = (size_t)n;
			l->at = 0;
			if (n == 0) {
				l->done = 1;
				break;
			}
		}
		if (l->io[l->at].c.start > at)
			break;
		admit(l, &l->io[l->at++]);
	}
	return 0;
}

static void bind_opt(sqlite3_stmt *st, int k, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, k, v);
	else
		sqlite3_bind_null(st, k);
}

/* The calls in a temporary table indexed on (pid, corr, seq). */
static int build_table(struct nsys_launch *l, struct err *e)
{
	sqlite3 *db = l->x->db;
	sqlite3_stmt *in = NULL;
	struct filed *b = malloc(CHUNK * sizeof *b);
	uint64_t k = 0;
	int rc;
	if (!b)
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = sqlite3_exec(db, "CREATE TEMP TABLE IF NOT EXISTS dsight_launch "
	                  "(seq INTEGER PRIMARY KEY, pid INTEGER, corr INTEGER,"
	                  " tid INTEGER, start INTEGER, name INTEGER, nvtx "
	                  "INTEGER); DELETE FROM temp.dsight_launch; BEGIN",
	                  NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO temp.dsight_launch VALUES "
		                        "(?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &in,
		                        NULL);
	while (rc == SQLITE_OK && k < l->nfiled) {
		long n = read_at(l->fd, b, CHUNK, k);
		if (n <= 0) {
			free(b);
			sqlite3_finalize(in);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return ioerr(e);
		}
		for (long i = 0; i < n && rc == SQLITE_OK; i++, k++) {
			sqlite3_bind_int64(in, 1, (int64_t)k);
			sqlite3_bind_int64(in, 2, b[i].pid);
			sqlite3_bind_int64(in, 3, b[i].corr);
			sqlite3_bind_int64(in, 4, b[i].c.tid);
			sqlite3_bind_int64(in, 5, b[i].c.start);
			bind_opt(in, 6, b[i].c.name);
			bind_opt(in, 7, b[i].c.nvtx);
			rc = sqlite3_step(in);
			sqlite3_reset(in);
			rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		}
	}
	free(b);
	sqlite3_finalize(in);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "CREATE INDEX temp.dsight_launch_key ON "
		                  "dsight_launch (pid, corr, seq); COMMIT", NULL,
		                  NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT tid, start, name, nvtx FROM "
		                        "temp.dsight_launch WHERE pid = ?1 AND "
		                        "corr = ?2 ORDER BY seq LIMIT 1", -1,
		                        &l->find, NULL);
	if (rc != SQLITE_OK) {
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return sqlerr(l, rc, e);
	}
	return 0;
}

/* The exact answer from the table (built on the first call). */
static int from_table(struct nsys_launch *l, int64_t pid, int64_t corr,
                      struct nsys_launch_call *c, struct err *e)
{
	int rc;
	if (!l->find && build_table(l, e) != 0)
		return -1;
	sqlite3_stmt *f = l->find;
	sqlite3_reset(f);
	sqlite3_bind_int64(f, 1, pid);
	sqlite3_bind_int64(f, 2, corr);
	rc = sqlite3_step(f);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		sqlerr(l, rc, e);
		return -1;
	}
	c->tid = sqlite3_column_int64(f, 0);
	c->start = sqlite3_column_int64(f, 1);
	c->name = sqlite3_column_type(f, 2) == SQLITE_NULL ? -1 :
	          sqlite3_column_int64(f, 2);
	c->nvtx = sqlite3_column_type(f, 3) == SQLITE_NULL ? -1 :
	          sqlite3_column_int64(f, 3);
	return 1;
}

int nsys_launch_find(struct nsys_launch *l, int64_t at, int64_t pid,
                     int64_t corr, struct nsys_launch_call *c, struct err *e)
{
	if (load(l, at, e) != 0)
		return -1;
	const struct pidstat *p = stat_of(l, pid, 0);
	if (!p || corr < p->min || corr > p->max)
		return 0; /* no call of the process has it */
	long s = lookup(l, (int32_t)(p - l->ps), corr);
	if (s >= 0 && !l->ring[l->hash[s].at].unsure) {
		*c = l->ring[l->hash[s].at].c;
		return 1;
	}
	if (s < 0 && l->done && !dropped(p, corr))
		return 0; /* every call seen, none dropped with it */
	return from_table(l, pid, corr, c, e);
}

void nsys_launch_close(struct nsys_launch *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->find);
	if (l->find && l->x && l->x->db)
		sqlite3_exec(l->x->db, "DROP TABLE IF EXISTS temp.dsight_launch",
		             NULL, NULL, NULL);
	if (l->fd >= 0)
		close(l->fd);
	strdict_free(&l->pids);
	free(l->ps);
	free(l->ring);
	free(l->hash);
	free(l->io);
	free(l);
}
