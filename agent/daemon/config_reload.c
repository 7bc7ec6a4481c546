/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/daemon/config_reload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/core/config.h"
#include "agent/core/sriov_policy_config.h"
#include "agent/lib/log.h"

#define CONFIG_MAX_BYTES (1 << 20)

struct config_reload {
	char *path;
	char *text;		/* of the last load, to tell a real change */
	struct config *cfg;	/* the last reload (owns the policies handed out) */
};

/* The whole file, NUL-terminated (malloc'd), or NULL. */
static char *read_text(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = malloc(CONFIG_MAX_BYTES + 1);
	while (buf && len < CONFIG_MAX_BYTES &&
	       (n = read(fd, buf + len, CONFIG_MAX_BYTES - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

int config_reload_new(const char *path, struct config_reload **ret)
{
	struct config_reload *r = calloc(1, sizeof(*r));

	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	r->text = read_text(path);
	*ret = r;
	return 0;
}

void config_reload_free(struct config_reload *r)
{
	if (!r)
		return;
	config_free(r->cfg);
	free(r->text);
	free(r->path);
	free(r);
}

bool config_reload_run(struct config_reload *r, bool forced, const struct sriov_policies **ret_pol)
{
	struct config *cfg = NULL;
	char err[1024], *text = read_text(r->path);

	if (!forced && text && r->text && !strcmp(text, r->text)) {
		free(text);
		return false;	/* touched, not changed */
	}
	if (config_load(r->path, &cfg, err, sizeof(err)) < 0) {
		log_error("sriov: reloading the configuration failed, the policies in force stay: "
			  "%s", err);
		free(text);
		return false;
	}
	free(r->text);
	r->text = text;
	config_free(r->cfg);
	r->cfg = cfg;
	log_info("sriov: configuration %s reloaded: %zu polic%s (only the sriov section takes "
		 "effect without a restart)", r->path, cfg->sriov->n, cfg->sriov->n == 1 ? "y" : "ies");
	*ret_pol = cfg->sriov;
	return true;
}
