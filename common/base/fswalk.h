/*
 * fswalk: walk and remove directory trees without following symlinks.
 *
 * Used by publishing (validating an existing report, removing staging and
 * old generations) and by the manifest (listing a report's files).
 */
#ifndef DSIGHT_FSWALK_H
#define DSIGHT_FSWALK_H

#include "base/err.h"

enum fswalk_type { FSWALK_FILE, FSWALK_DIR, FSWALK_LINK, FSWALK_OTHER };

/* Called for every entry below the root with its path relative to the root
 * ("detail/ab.json.gz"); a directory is reported before its contents.
 * Return 0 to continue, or an ERR_* code (with e filled) to stop. */
typedef int (*fswalk_fn)(void *ctx, const char *rel, enum fswalk_type type,
                         struct err *e);

/* Walks the tree under dir (never following symlinks; at most 16 levels). */
int fswalk(const char *dir, fswalk_fn fn, void *ctx, struct err *e);

/* Removes path and everything below it (symlinks are removed, not
 * followed).  Returns 0, or -1 with errno set when something could not be
 * removed (a missing path is success). */
int fswalk_remove_tree(const char *path);

#endif
