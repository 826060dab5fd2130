/*
 * webgen: the viewer files of one generation of a report, as the HTTP
 * transport serves them.
 *
 * Loaded with the generation (off the loop): the report directory is
 * opened (a descriptor, so a later swap of the directory does not change
 * what this generation serves), its manifest.json is read and must name
 * the generation being loaded, index.html is opened and the place of its
 * live marker (just after <head>) found, and the manifest's servable files
 * (detail/<name>, parts.json, part-NNN.html) are kept in a sorted list.
 * A report that is a file (a cache, an evidence document) or a directory
 * without index.html has no viewer: webgen_reason says why.  Immutable
 * once loaded, so any thread may read it.
 */
#ifndef DSIGHT_WEBGEN_H
#define DSIGHT_WEBGEN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct webgen;

/* Loads the viewer files of report (an absolute path) for generation
 * (the id of the dataset just opened).  Never fails for a report without
 * a viewer (*out then has a reason); ERR_DATA when the directory moved on
 * to another generation meanwhile (the caller may retry); ERR_NOMEM.
 * *out owned by the caller (webgen_free). */
int webgen_load(const char *report, const char *generation,
                struct webgen **out, struct err *e);
/* A generation without a viewer, for reason (copied). */
int webgen_none(const char *reason, struct webgen **out, struct err *e);
void webgen_free(struct webgen *w);

/* NULL when the generation has a viewer; else why not (borrowed). */
const char *webgen_reason(const struct webgen *w);
/* index.html: its descriptor (borrowed; read it with pread), size and the
 * offset at which the live marker goes. */
int webgen_index_fd(const struct webgen *w);
uint64_t webgen_index_size(const struct webgen *w);
uint64_t webgen_marker_at(const struct webgen *w);
/* 1 when rel (e.g. "detail/ab12.json.gz", "parts.json") is a file of the
 * generation that may be served. */
int webgen_has(const struct webgen *w, const char *rel);
/* Opens rel (webgen_has must hold) read-only: a descriptor owned by the
 * caller, or -1 (errno set). */
int webgen_open(const struct webgen *w, const char *rel);

#endif
