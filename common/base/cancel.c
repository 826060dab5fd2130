/* cancel: the cancellation flag and its SQLite hook (see cancel.h). */
#include "base/cancel.h"

int cancel_requested(const volatile sig_atomic_t *flag)
{
	return flag && *flag;
}

static int on_progress(void *arg)
{
	return cancel_requested(arg);
}

void cancel_sqlite(sqlite3 *db, const volatile sig_atomic_t *flag)
{
	/* about every 0.1 ms of VM work: cheap, and prompt */
	if (flag)
		sqlite3_progress_handler(db, 10000, on_progress, (void *)flag);
	else
		sqlite3_progress_handler(db, 0, NULL, NULL);
}
