/*
 * qlist: the frame of a list response, the one shape every list kind
 * answers with: the head (total, groups), the tail (offset, limit, range
 * and the joined request, qjoin) and the close (the notes of an empty
 * list, qnotes).  It sits above qshared, qjoin and qnotes, which never
 * call it.
 */
#ifndef DSIGHT_QLIST_H
#define DSIGHT_QLIST_H

#include <stddef.h>

#include "query/qshared.h"

/* `{"total":T,"items":[` */
void q_list_head(struct qctx *q, size_t total);
/* `{"total":T,"groups":G,"items":[` (a grouped list) */
void q_groups_head(struct qctx *q, size_t total, size_t groups);
/* `],"offset":O,"limit":L,"range":[s,e]` and the join's "request" (the
 * caller adds group_by and extras, then calls q_list_close) */
void q_list_tail(struct qctx *q);
/* The "notes" (qnotes.h), then `}`. */
void q_list_close(struct qctx *q, size_t total);

#endif
