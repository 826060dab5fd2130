/*
 * qdoc: what the tables of kinds and parameters say about themselves: the
 * generated part of `dsight query --help`, the MCP input schema of the
 * query tool, and a JSON description of both tables (for language
 * bindings' help and for tests that check the man page and the viewer).
 */
#ifndef DSIGHT_QDOC_H
#define DSIGHT_QDOC_H

#include <jansson.h>

#include "base/buf.h"

/* Appends the "Kinds", "Flags" (ending with more_flags, the caller's own
 * lines, or NULL) and "Sort keys" sections of `dsight query --help`. */
void qdoc_help(struct buf *out, const char *more_flags);

/* Appends the flags of one kind (the parameters whose kinds name it, in
 * table order) as the "Flags" section does, ending with more_flags. */
void qdoc_help_kind(struct buf *out, const char *kind,
                    const char *more_flags);

/* Appends the "Views" section of `dsight query sql --help`: every view of
 * the cache with its columns (store_views.h). */
void qdoc_help_views(struct buf *out);

/*
 * Appends {"kinds": [{"name", "help", "params": [names]}], "params":
 * [{"name", "flag", "type", "default", "kinds": [...], "help"}]} (compact;
 * "flag" null for the positional kind, "default" null when none).
 */
void qdoc_describe_json(struct buf *out);

/*
 * A new JSON-schema object {"type": "object", "properties": {...}} with one
 * property per query parameter (typed, with default, bounds and the enum
 * of kinds); the caller adds its own members.  NULL when out of memory.
 * The caller owns the reference.
 */
json_t *qdoc_schema(void);

#endif
