/*
 * fuzzlib: what the libFuzzer harnesses of tests/fuzz/ share (header only;
 * each harness is one program).  fuzz_file writes an input to a scratch
 * file for the readers that take a path; fuzz_check aborts (a finding)
 * when a property the product promises does not hold.
 */
#ifndef DSIGHT_FUZZLIB_H
#define DSIGHT_FUZZLIB_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"

#define fuzz_check(cond, what)                                               \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz property violated: %s\n", what); \
			abort();                                             \
		}                                                            \
	} while (0)

static char fuzz_dir_path[256];
static char fuzz_names[4][64];

static void fuzz_cleanup(void)
{
	char path[512];
	for (int i = 0; i < 4 && fuzz_names[i][0]; i++) {
		snprintf(path, sizeof path, "%s/%s", fuzz_dir_path, fuzz_names[i]);
		unlink(path);
	}
	rmdir(fuzz_dir_path);
}

/* A scratch directory for this process (made once, removed at exit). */
static inline const char *fuzz_dir(void)
{
	char *dir = fuzz_dir_path;
	if (!dir[0]) {
		/* memory-backed when possible: the readers take a path */
		const char *t = getenv("FUZZ_TMPDIR");
		if (!t || !*t)
			t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof fuzz_dir_path, "%s/dsight-fuzz-XXXXXX", t);
		if (!mkdtemp(dir))
			abort();
		atexit(fuzz_cleanup);
	}
	return dir;
}

/* Writes data to <fuzz_dir>/<name> (replacing it) and returns the path
 * (static storage, valid until the next call). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t n)
{
	static char path[512];
	int i = 0;
	while (i < 4 && fuzz_names[i][0] && strcmp(fuzz_names[i], name))
		i++;
	if (i < 4 && !fuzz_names[i][0])
		snprintf(fuzz_names[i], sizeof fuzz_names[i], "%s", name);
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, data + off, n - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	close(fd);
	return path;
}

#endif
