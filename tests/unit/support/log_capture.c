/* SPDX-License-Identifier: Apache-2.0 */
#include "log_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void capture_begin(struct capture *c)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/dralet-log-XXXXXX");
	fd = mkstemp(c->path);
	fflush(stderr);
	c->saved = dup(2);
	dup2(fd, 2);
	close(fd);
}

char *capture_end(struct capture *c)
{
	char *buf;
	struct stat st;
	FILE *f;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	f = fopen(c->path, "r");
	if (!f || fstat(fileno(f), &st) < 0) {
		if (f)
			fclose(f);
		unlink(c->path);
		return strdup("");
	}
	buf = calloc(1, (size_t)st.st_size + 1);
	if (buf && st.st_size)
		(void)!fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	unlink(c->path);
	return buf;
}
