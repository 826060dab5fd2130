/*
 * nsys_name: worker identity from an Nsight export's file name
 * (doc/nsight-import.md "Worker identity").
 *
 *   <host>_<role>_w<index>[_e<engine>][_profile_rank<rank>|_profile_gpu<list>].sqlite
 *   <host>_frontend_<n>.sqlite
 *
 * role is prefill, decode or agg (worker "<role>-<index>"); anything else
 * is the worker "unmapped" with no host.
 */
#ifndef DSIGHT_NSYS_NAME_H
#define DSIGHT_NSYS_NAME_H

#include <stdint.h>

struct nsys_name {
	int mapped;        /* 0: worker "unmapped", nothing else set */
	char worker[64];   /* "decode-0", "frontend", "unmapped" */
	char role[16];     /* "prefill", "decode", "agg", "frontend" */
	int64_t index;     /* worker index; -1 for the frontend */
	char host[256];    /* host part of the name ("" when unmapped) */
	int has_engine;
	int64_t engine;
	int has_rank;
	int64_t rank;
	char gpus[64];     /* "" when absent */
};

/* Parses a base file name (no directory).  Always succeeds: a name that
 * does not follow the convention gives mapped = 0, worker "unmapped". */
void nsys_name_parse(const char *file, struct nsys_name *out);

#endif
