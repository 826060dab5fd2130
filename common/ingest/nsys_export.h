/*
 * nsys_export: one Nsight Systems SQLite export, opened read-only.
 *
 * Owns the checks that decide whether a file is importable (SQLite magic,
 * required tables and columns: an error for a file that is not SQLite or is
 * corrupt, a "skip" with a reason for a missing table), the clock and
 * capture metadata, the host from the system environment, the optional
 * tables present, and the file's inventory facts (size, mtime, SHA-256).
 */
#ifndef DSIGHT_NSYS_EXPORT_H
#define DSIGHT_NSYS_EXPORT_H

#include <sqlite3.h>
#include <stdint.h>

#include <jansson.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/err.h"

struct nsys_export {
	char *display;       /* the path as named to the user (owned) */
	sqlite3 *db;         /* NULL when closed */
	int64_t epoch_ns;    /* TARGET_INFO_SESSION_START_TIME.utcEpochNs */
	int has_sysclock;
	int64_t sysclock_ns; /* systemClockNs (0 when absent) */
	int64_t cap_start;   /* capture bounds, session-relative ns */
	int64_t cap_stop;
	int64_t cap_start_abs, cap_stop_abs; /* epoch ns */
	char *hostname;      /* TARGET_INFO_SYSTEM_ENV Hostname/HostName or NULL */
	int has_thread_names;
	int has_samples;     /* COMPOSITE_EVENTS and SAMPLING_CALLCHAINS */
	int cuda;            /* CUPTI_ACTIVITY_KIND_KERNEL exists */
	int has_text, has_text_id, has_gtid; /* optional NVTX_EVENTS columns */
};

/*
 * Opens the export at path (read-only, temp storage on disk) and reads its
 * metadata into x (which the caller then owns: nsys_export_close).
 * Returns ERR_DATA naming display for a file that cannot be opened, is not
 * SQLite or is corrupt.  Returns 0 with *skip (malloc'd sentence, caller
 * frees) set and x closed when the export lacks required tables/rows.
 */
int nsys_export_open(const char *path, const char *display,
                     struct nsys_export *x, char **skip, struct err *e);

void nsys_export_close(struct nsys_export *x);

/* The run time in seconds of a session-relative timestamp rel of x:
 * (epoch + rel - origin_ns) / 1e9, the difference in 64-bit integers;
 * ERR_DATA naming the export when it overflows. */
int nsys_export_seconds(const struct nsys_export *x, int64_t origin_ns,
                        int64_t rel, double *out, struct err *e);

/* 1 when x has table t (0 when not); 1 when its table t has column c,
 * matched case-insensitively as SQLite does.  <0 on an SQLite failure
 * (its code in *rc). */
int nsys_export_has_table(const struct nsys_export *x, const char *t, int *rc);
int nsys_export_has_column(const struct nsys_export *x, const char *t,
                           const char *c, int *rc);

/* Converts an SQLite failure on x into ERR_DATA naming the file. */
int nsys_export_sqlerr(const struct nsys_export *x, int rc, const char *what,
                       struct err *e);

/* Size, mtime (ns) and lowercase hex SHA-256 of the file at path; stops
 * ("interrupted") soon after *cancel (may be NULL) becomes non-zero. */
int nsys_export_file_facts(const char *path, const char *display,
                           int64_t *bytes, int64_t *mtime_ns,
                           char sha256_hex[65],
                           const cancel_flag *cancel, struct err *e);

/* A JSON string of n bytes of text from an export; invalid UTF-8
 * sequences become U+FFFD (each adds 1 to *invalid when invalid is not
 * NULL) and NUL stays U+0000.  New reference, NULL only when out of
 * memory. */
json_t *nsys_export_text(const char *s, size_t n, uint64_t *invalid);
/* nsys_export_text without counting. */
json_t *nsys_export_string(const char *s, size_t n);

#endif
