/* fswalk: directory walking and removal (see fswalk.h). */
#include "base/fswalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FSWALK_DEPTH 16

static int walk_fd(int dfd, char *rel, size_t rlen, size_t cap, int depth,
                   fswalk_fn fn, void *ctx, struct err *e)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return err_sys(e, ERR_DATA, "cannot read directory %s",
		               rlen ? rel : ".");
	}
	while ((errno = 0, de = readdir(d))) {
		struct stat st;
		size_t n = strlen(de->d_name);
		enum fswalk_type type;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rlen + n + 2 > cap) {
			rc = err_set(e, ERR_DATA, "path too long below %s", rel);
			break;
		}
		size_t nlen = rlen;
		if (rlen)
			rel[nlen++] = '/';
		memcpy(rel + nlen, de->d_name, n + 1);
		nlen += n;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			rc = err_sys(e, ERR_DATA, "cannot inspect %s", rel);
			break;
		}
		type = S_ISREG(st.st_mode)   ? FSWALK_FILE
		       : S_ISDIR(st.st_mode) ? FSWALK_DIR
		       : S_ISLNK(st.st_mode) ? FSWALK_LINK
		                             : FSWALK_OTHER;
		rc = fn(ctx, rel, type, e);
		if (!rc && type == FSWALK_DIR) {
			if (depth >= FSWALK_DEPTH) {
				rc = err_set(e, ERR_DATA,
				             "directories nested too deeply at %s", rel);
			} else {
				int sub = openat(dirfd(d), de->d_name,
				                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				                 O_CLOEXEC);
				if (sub < 0)
					rc = err_sys(e, ERR_DATA, "cannot open %s", rel);
				else
					rc = walk_fd(sub, rel, nlen, cap, depth + 1, fn,
					             ctx, e);
			}
		}
		rel[rlen] = '\0';
		if (rc)
			break;
	}
	if (!rc && errno)
		rc = err_sys(e, ERR_DATA, "cannot read directory %s",
		             rlen ? rel : ".");
	closedir(d);
	return rc;
}

int fswalk(const char *dir, fswalk_fn fn, void *ctx, struct err *e)
{
	char rel[4096];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return err_sys(e, ERR_DATA, "cannot open directory %s", dir);
	rel[0] = '\0';
	return walk_fd(fd, rel, 0, sizeof rel, 0, fn, ctx, e);
}

/* Removes the contents of the directory open as dfd (consumed). */
static int remove_contents(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			if (errno != ENOENT)
				rc = -1;
			continue;
		}
		int sub = depth < 64 ? openat(dirfd(d), de->d_name,
		                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		                              O_CLOEXEC)
		                     : -1;
		if (sub < 0 || remove_contents(sub, depth + 1) ||
		    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR))
			rc = -1;
	}
	int saved = errno;
	closedir(d);
	errno = saved;
	return rc;
}

int fswalk_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || remove_contents(fd, 0))
		return -1;
	return rmdir(path);
}
