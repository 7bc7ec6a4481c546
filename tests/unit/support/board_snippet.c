/* SPDX-License-Identifier: Apache-2.0 */
#include "board_snippet.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "boards/sim/board.h"

char *board_tree(const char *yaml)
{
	char file[] = "/tmp/dralet-board-XXXXXX", err[512] = "", *dir = NULL;
	size_t len = strlen(yaml);
	int fd = mkstemp(file), r = -1;

	if (fd < 0)
		fail_msg("cannot create a board file: %m");
	if (write(fd, yaml, len) == (ssize_t)len)
		r = board_materialize_temp(file, &dir, err, sizeof(err));
	close(fd);
	unlink(file);
	if (r < 0)
		fail_msg("board snippet: %s", err[0] ? err : "cannot write it");
	return dir;
}
