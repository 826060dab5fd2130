/*
 * qsqlvtab: the sql kind's faster engine on one connection: virtual tables
 * over the columns qsqlmem holds, and TEMP views nvtx and metric_points
 * over them that shadow the file's views of the same names, so a statement
 * reads the same columns, values and types, unchanged.
 *
 * It owns the virtual tables (dsight_mem_nvtx, dsight_mem_points): what
 * they declare to SQLite's planner (GROUP BY/ORDER BY name, and worker
 * then name, consumed without a sort, as the file's name indexes give
 * them; equality on name, worker, profile or series and bounds on start
 * or time narrowing the groups and rows visited; SQLite checks every
 * constraint again on each row, so narrowing only skips rows that could
 * not match) and the views' definitions (the columns the file's views read
 * from the v1 rows, depth and thread_name, value_text, source_id and
 * source_row, with the same expressions over the same tables).
 */
#ifndef DSIGHT_QSQLVTAB_H
#define DSIGHT_QSQLVTAB_H

#include <sqlite3.h>

#include "base/err.h"
#include "query/qsqlmem.h"

/*
 * Registers the virtual tables over m (borrowed: it outlives db) on db
 * and creates the TEMP views, before the connection's authorizer is set.
 * ERR_DATA naming db's message.
 */
int qsqlvtab_install(sqlite3 *db, const struct qsqlmem *m, struct err *e);

#endif
