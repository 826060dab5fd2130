/*
 * fileid: the identity of a file (device, inode, size, modification and
 * change times), used to notice that a report was rebuilt or rewritten.
 */
#ifndef DSIGHT_FILEID_H
#define DSIGHT_FILEID_H

#include <stdint.h>

#include "base/err.h"

struct fileid {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* Stats path (following symlinks) into id.  ERR_DATA naming the path when
 * it cannot be stat'ed. */
int fileid_get(const char *path, struct fileid *id, struct err *e);

/* 1 when both describe the same, unchanged file. */
int fileid_equal(const struct fileid *a, const struct fileid *b);

#endif
