/* SPDX-License-Identifier: Apache-2.0 */
#include "on_demand_ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEDGER_TEXT_MAX (VFOD_HELD_MAX * (VFOD_UID_MAX + VFOD_CLAIM_MAX + 16) + 32)

int vfod_file_open(struct dralet_backend_ctx *ctx, const char *pf, struct vfod_file *f)
{
	const char *dir = dralet_ctx_state_dir(ctx);
	char lock[PATH_MAX + 8];

	f->lock_fd = -1;
	if (!dir) {
		dralet_ctx_error(ctx, "PF %s: VFs are made on demand only under dralet run (no "
				 "state directory for the PF's ledger)", pf);
		return -EOPNOTSUPP;
	}
	if (snprintf(f->path, sizeof(f->path), "%s/sriov-on-demand-%s", dir, pf) >=
	    (int)sizeof(f->path))
		return -ENAMETOOLONG;
	snprintf(lock, sizeof(lock), "%s.lock", f->path);
	mkdir(dir, 0750);
	f->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f->lock_fd < 0 || flock(f->lock_fd, LOCK_EX) < 0) {
		int e = errno;
		dralet_ctx_error(ctx, "PF %s: cannot lock %s: %s", pf, lock, strerror(e));
		if (f->lock_fd >= 0)
			close(f->lock_fd);
		f->lock_fd = -1;
		return -e;
	}
	return 0;
}

void vfod_file_close(struct vfod_file *f)
{
	if (f->lock_fd >= 0)
		close(f->lock_fd);	/* releases the flock */
	f->lock_fd = -1;
}

int vfod_file_read(struct dralet_backend_ctx *ctx, const struct vfod_file *f,
		       struct vfod_ledger *l)
{
	char *text = calloc(1, LEDGER_TEXT_MAX + 1);
	FILE *in = fopen(f->path, "re");
	size_t n = 0;
	int r = 0;

	if (!text) {
		if (in)
			fclose(in);
		return -ENOMEM;
	}
	if (in) {
		n = fread(text, 1, LEDGER_TEXT_MAX, in);
		fclose(in);
	} else if (errno != ENOENT) {
		r = -errno;
	}
	text[n] = '\0';
	if (!r && vfod_ledger_parse(text, l) < 0)
		r = -EINVAL;
	if (r < 0)
		dralet_ctx_error(ctx, "%s: cannot read it: %s", f->path,
				 r == -EINVAL ? "not a ledger of VFs on demand" : strerror(-r));
	free(text);
	return r;
}

int vfod_file_write(struct dralet_backend_ctx *ctx, const struct vfod_file *f,
			const struct vfod_ledger *l)
{
	char tmp[PATH_MAX + 8], *text = NULL, dir[PATH_MAX], *slash;
	int fd = -1, len, r = 0, dfd;

	if (!l->n && !l->has_original) {
		if (unlink(f->path) < 0 && errno != ENOENT)
			r = -errno;
		goto sync_dir;
	}
	if (!(text = malloc(LEDGER_TEXT_MAX)))
		return -ENOMEM;
	len = vfod_ledger_format(l, text, LEDGER_TEXT_MAX);
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	if (len < 0)
		r = len;
	else if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0 ||
		 write(fd, text, (size_t)len) != len || fsync(fd) < 0)
		r = -errno ? -errno : -EIO;
	if (fd >= 0 && close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, f->path) < 0)
		r = -errno;
	free(text);
sync_dir:
	snprintf(dir, sizeof(dir), "%s", f->path);
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	if (!r && (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	if (r < 0)
		dralet_ctx_error(ctx, "%s: cannot write it: %s", f->path, strerror(-r));
	return r;
}
