/* cancel: the cancellation flag and its SQLite hook (see cancel.h). */
#include "base/cancel.h"

#include <sqlite3.h>
#include <stddef.h>

#if ATOMIC_INT_LOCK_FREE != 2
#error "cancel_flag is set in signal handlers: it needs a lock-free atomic int"
#endif

int cancel_requested(const cancel_flag *flag)
{
	return flag && atomic_load(flag);
}

static int on_progress(void *arg)
{
	return cancel_requested(arg);
}

void cancel_sqlite(sqlite3 *db, const cancel_flag *flag)
{
	/* about every 0.1 ms of VM work: cheap, and prompt */
	if (flag)
		sqlite3_progress_handler(db, 10000, on_progress, (void *)flag);
	else
		sqlite3_progress_handler(db, 0, NULL, NULL);
}
