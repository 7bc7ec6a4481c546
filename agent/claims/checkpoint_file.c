/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/checkpoint_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/lib/atomic_file.h"
#include "agent/lib/err_msg.h"

int checkpoint_file_load(const char *dir, struct checkpoint **ret_ck, char *err, size_t errlen)
{
	char path[4096], *text;
	size_t len;
	int r;

	if (snprintf(path, sizeof(path), "%s/%s", dir, CHECKPOINT_FILE_NAME) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	r = atomic_file_read(path, CHECKPOINT_MAX_BYTES, &text, &len);
	if (r == -EFBIG)
		return err_printf(err, errlen, -EBADMSG, "larger than %u bytes",
				  CHECKPOINT_MAX_BYTES);
	if (r < 0)
		return err_printf(err, errlen, r, "%s", strerror(-r));
	r = checkpoint_decode(text, len, ret_ck, err, errlen);
	free(text);
	return r;
}

static int write_checkpoint(void *userdata, FILE *out)
{
	return checkpoint_write(userdata, out);
}

int checkpoint_file_save(const char *dir, struct checkpoint *ck)
{
	return atomic_file_produce(dir, CHECKPOINT_FILE_NAME, 0600, write_checkpoint, ck);
}

static bool checkpoint_name(const char *name, void *userdata)
{
	(void)userdata;
	return !strcmp(name, CHECKPOINT_FILE_NAME);
}

int checkpoint_file_remove_stale(const char *dir)
{
	return atomic_file_remove_stale(dir, checkpoint_name, NULL);
}

int checkpoint_file_move_aside(const char *dir, char *ret_path, size_t size)
{
	char from[4096], stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (snprintf(from, sizeof(from), "%s/%s", dir, CHECKPOINT_FILE_NAME) >= (int)sizeof(from) ||
	    snprintf(ret_path, size, "%s/%s.corrupt-%s", dir, CHECKPOINT_FILE_NAME, stamp) >=
		    (int)size)
		return -ENAMETOOLONG;
	if (rename(from, ret_path) < 0)
		return -errno;
	return 0;
}

int checkpoint_boot_id(const char *proc_root, char *buf, size_t size)
{
	char path[4096], *text;
	size_t len;
	int r;

	if (snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id",
		     proc_root ? proc_root : "/proc") >= (int)sizeof(path))
		return -ENAMETOOLONG;
	r = atomic_file_read(path, 4096, &text, &len);
	if (r < 0)
		return r;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (len >= size) {
		free(text);
		return -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	free(text);
	return (int)len;
}
