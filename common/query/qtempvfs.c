/* qtempvfs: a VFS that caps temporary storage (see qtempvfs.h). */
#include "query/qtempvfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

/* A counted temporary file: the real file follows this header. */
struct tfile {
	sqlite3_file base;
	sqlite3_int64 size; /* the bytes counted for it: its high-water end */
};

#define REAL(f) ((sqlite3_file *)((struct tfile *)(f) + 1))

/* The registry's state, process-wide as SQLite's VFS list is. */
static sqlite3_vfs vfs;
static _Atomic long long used;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int register_rc;

static sqlite3_vfs *real_vfs(void)
{
	return vfs.pAppData;
}

static void release(struct tfile *f, sqlite3_int64 to)
{
	if (to < f->size) {
		atomic_fetch_sub(&used, f->size - to);
		f->size = to;
	}
}

static int t_close(sqlite3_file *p)
{
	struct tfile *f = (struct tfile *)p;
	int rc = REAL(p)->pMethods->xClose(REAL(p));
	release(f, 0);
	return rc;
}

static int t_read(sqlite3_file *p, void *b, int n, sqlite3_int64 off)
{
	return REAL(p)->pMethods->xRead(REAL(p), b, n, off);
}

static int t_write(sqlite3_file *p, const void *b, int n, sqlite3_int64 off)
{
	struct tfile *f = (struct tfile *)p;
	sqlite3_int64 end = off + n;

	if (end > f->size) {
		long long grow = end - f->size;
		if (atomic_fetch_add(&used, grow) + grow > QTEMPVFS_CAP) {
			atomic_fetch_sub(&used, grow);
			return SQLITE_FULL;
		}
		f->size = end;
	}
	return REAL(p)->pMethods->xWrite(REAL(p), b, n, off);
}

static int t_truncate(sqlite3_file *p, sqlite3_int64 n)
{
	int rc = REAL(p)->pMethods->xTruncate(REAL(p), n);
	if (rc == SQLITE_OK)
		release((struct tfile *)p, n);
	return rc;
}

static int t_sync(sqlite3_file *p, int flags)
{
	return REAL(p)->pMethods->xSync(REAL(p), flags);
}

static int t_size(sqlite3_file *p, sqlite3_int64 *n)
{
	return REAL(p)->pMethods->xFileSize(REAL(p), n);
}

static int t_lock(sqlite3_file *p, int l)
{
	return REAL(p)->pMethods->xLock(REAL(p), l);
}

static int t_unlock(sqlite3_file *p, int l)
{
	return REAL(p)->pMethods->xUnlock(REAL(p), l);
}

static int t_reserved(sqlite3_file *p, int *out)
{
	return REAL(p)->pMethods->xCheckReservedLock(REAL(p), out);
}

static int t_control(sqlite3_file *p, int op, void *arg)
{
	return REAL(p)->pMethods->xFileControl(REAL(p), op, arg);
}

static int t_sector(sqlite3_file *p)
{
	return REAL(p)->pMethods->xSectorSize(REAL(p));
}

static int t_device(sqlite3_file *p)
{
	return REAL(p)->pMethods->xDeviceCharacteristics(REAL(p));
}

static const sqlite3_io_methods temp_methods = {
	1, t_close, t_read, t_write, t_truncate, t_sync, t_size, t_lock,
	t_unlock, t_reserved, t_control, t_sector, t_device,
	NULL, NULL, NULL, NULL, NULL, NULL,
};

static int t_open(sqlite3_vfs *v, const char *name, sqlite3_file *p,
                  int flags, int *out_flags)
{
	const int temp = SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL |
	                 SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL;
	sqlite3_vfs *r = real_vfs();
	struct tfile *f = (struct tfile *)p;
	int rc;

	(void)v;
	if (!(flags & temp))
		/* the report itself: the real file in place */
		return r->xOpen(r, name, p, flags, out_flags);
	memset(f, 0, sizeof *f);
	rc = r->xOpen(r, name, REAL(p), flags, out_flags);
	f->base.pMethods = rc == SQLITE_OK ? &temp_methods : NULL;
	return rc;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	return real_vfs()->xDelete(real_vfs(), name, sync);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return real_vfs()->xAccess(real_vfs(), name, flags, out);
}

static int v_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return real_vfs()->xFullPathname(real_vfs(), name, n, out);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs()->xRandomness(real_vfs(), n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs()->xSleep(real_vfs(), us);
}

static int v_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs()->xCurrentTime(real_vfs(), out);
}

static int v_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs()->xGetLastError(real_vfs(), n, out);
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return real_vfs()->xCurrentTimeInt64(real_vfs(), out);
}

static void setup(void)
{
	sqlite3_vfs *r = sqlite3_vfs_find(NULL);

	if (!r || r->iVersion < 2) {
		register_rc = SQLITE_ERROR;
		return;
	}
	memset(&vfs, 0, sizeof vfs);
	vfs.iVersion = 2;
	vfs.szOsFile = (int)sizeof(struct tfile) + r->szOsFile;
	vfs.mxPathname = r->mxPathname;
	vfs.zName = QTEMPVFS_NAME;
	vfs.pAppData = r;
	vfs.xOpen = t_open;
	vfs.xDelete = v_delete;
	vfs.xAccess = v_access;
	vfs.xFullPathname = v_full;
	vfs.xRandomness = v_random;
	vfs.xSleep = v_sleep;
	vfs.xCurrentTime = v_time;
	vfs.xGetLastError = v_error;
	vfs.xCurrentTimeInt64 = v_time64;
	register_rc = sqlite3_vfs_register(&vfs, 0);
}

int qtempvfs_register(void)
{
	pthread_once(&once, setup);
	return register_rc;
}
