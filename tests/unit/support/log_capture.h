/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capturing what the agent logs (stderr: agent/lib/log.h writes there) while a
 * call runs, so tests can check what an operator would read.
 */
#ifndef DRALET_TEST_LOG_CAPTURE_H
#define DRALET_TEST_LOG_CAPTURE_H

struct capture {
	int saved;
	char path[64];
};

/* Sends stderr to a temporary file until capture_end. */
void capture_begin(struct capture *c);
/* Returns what was written (malloc'd, never NULL) and restores stderr. */
char *capture_end(struct capture *c);

#endif
