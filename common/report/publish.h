/*
 * publish: where a report is written and how it replaces the previous one
 * (doc/report-files.md "Building, staging and publishing").
 *
 * Owns output validation (symlinks, the inputs' directories, foreign
 * directories and files), the build lock `.<name>.lock` beside the output
 * (flock; a second build of the same output fails at once with a clear
 * message instead of waiting), the staging directory
 * `.<name>.build-XXXXXX` beside the output (stale ones are removed while
 * holding the lock), and the atomic exchange (renameat2 RENAME_EXCHANGE,
 * or two renames with a move-back).  A build that never commits leaves the
 * previous report untouched and no staging directory.
 */
#ifndef DSIGHT_PUBLISH_H
#define DSIGHT_PUBLISH_H

#include <stddef.h>

#include "base/err.h"

struct publish;

/*
 * Checks that output may receive a report built from inputs (files or
 * directories that must exist): not a symlink, not an input's directory or
 * an ancestor of one, and either missing, an empty directory, or a report
 * (manifest.json with generator "srtctl-trace") holding nothing its
 * manifest does not list.  Touches nothing.  ERR_USAGE for a refusal.
 */
int publish_check_output(const char *output, const char *const *inputs,
                         size_t ninputs, struct err *e);

/*
 * Validates output, takes the build lock, removes stale staging
 * directories of this output and creates a fresh staging directory.  On
 * success *out is owned by the caller (publish_end).  Nothing in the
 * output is touched.
 */
int publish_begin(const char *output, const char *const *inputs,
                  size_t ninputs, struct publish **out, struct err *e);

/*
 * For a build that must stop NOW (a signal it cannot honour promptly, e.g.
 * inside SQLite's index sort): removes every staging directory beside
 * output.  Only for the process that holds output's build lock, i.e. from
 * another thread while its own build runs, before publishing starts, and
 * just before that process exits.  Each directory is renamed (so that the
 * build's further writes fail instead of re-creating entries) and removed
 * by a forked child that does not keep the lock.  Best effort.
 */
void publish_abandon_staging(const char *output);

/* Checks that the staged manifest.json is one a later build of the same
 * output accepts (the check publish_begin makes on an existing report). */
int publish_verify_staged(const struct publish *p, struct err *e);

/* The staging directory (absolute) where every report file is written. */
const char *publish_staging(const struct publish *p);
/* The absolute path of the output. */
const char *publish_output(const struct publish *p);

/*
 * Replaces the output with the staging directory atomically and deletes
 * the previous report.  On failure the previous report is in place.
 */
int publish_commit(struct publish *p, struct err *e);

/* Removes the staging directory unless committed, releases the lock and
 * frees p (NULL is fine). */
void publish_end(struct publish *p);

/* Flushes a written file (or directory) to disk. */
int publish_sync_path(const char *path, struct err *e);

#endif
