/* fileid: file identity for rebuild detection (see fileid.h). */
#include "base/fileid.h"

#include <errno.h>
#include <sys/stat.h>

int fileid_get(const char *path, struct fileid *id, struct err *e)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return err_sys(e, ERR_DATA, "%s", path);
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	id->size = (uint64_t)st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return 0;
}

int fileid_equal(const struct fileid *a, const struct fileid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}
