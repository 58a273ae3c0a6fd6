/*
 * procstatus.h: a line of /proc/self/status for the test programs that
 * report their own memory (commloop.c, threadchurn.c).
 */
#ifndef GCK_TEST_PROCSTATUS_H
#define GCK_TEST_PROCSTATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* proc_status_kb returns the value of the "key:" line (kB), -1 if none. */
static inline long proc_status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t k = strlen(key);
	long v = -1;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, key, k) == 0 && line[k] == ':')
			v = atol(line + k + 1);
	fclose(f);
	return v;
}

#endif
