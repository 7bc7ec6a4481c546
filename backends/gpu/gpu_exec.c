/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam through which GPU backends run external tools (nvidia-smi): one
 * function, so tests point the tool option at a script that logs its
 * arguments. No shell is involved; the child gets an empty stdin and a pipe
 * for stdout+stderr, and is killed when it overruns its time.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

extern char **environ;

bool gpu_executable(const char *path)
{
	struct stat st;

	return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The agent's environment with @assignment ("LD_LIBRARY_PATH=...") in place
 * of its own LD_LIBRARY_PATH; the array is malloc'd, its strings are not. */
static char **environ_with(const char *assignment)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + 2, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16))
			env[k++] = environ[i];
	env[k] = (char *)assignment;
	return env;
}

int gpu_run_tool(char *const argv[], const char *lib_path, int timeout_ms, char *out,
		 size_t out_size)
{
	posix_spawn_file_actions_t fa;
	char lib_env[4200], **env = environ;
	int pipefd[2], status, r;
	size_t len = 0;
	pid_t pid;
	long deadline = now_ms() + timeout_ms;
	bool timed_out = false;

	if (out_size)
		out[0] = '\0';
	if (!argv || !argv[0] || argv[0][0] != '/')
		return -EINVAL;
	if (!gpu_executable(argv[0]))
		return access(argv[0], F_OK) == 0 ? -EACCES : -ENOENT;
	if (lib_path) {
		if (snprintf(lib_env, sizeof(lib_env), "LD_LIBRARY_PATH=%s", lib_path) >=
		    (int)sizeof(lib_env))
			return -ENAMETOOLONG;
		if (!(env = environ_with(lib_env)))
			return -ENOMEM;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		goto out_env;
	}
	if ((r = posix_spawn_file_actions_init(&fa)) != 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		r = -r;
		goto out_env;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (env != environ)
		free(env);
	if (r != 0) {
		close(pipefd[0]);
		return -r;
	}
	for (;;) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
		long left = deadline - now_ms();
		char chunk[512];
		ssize_t n;

		if (left <= 0) {
			timed_out = true;
			break;
		}
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			timed_out = r == 0;
			break;
		}
		n = read(pipefd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* EOF: the tool closed its output */
		if (out_size && len + 1 < out_size) {
			size_t take = (size_t)n < out_size - 1 - len ? (size_t)n : out_size - 1 - len;
			memcpy(out + len, chunk, take);
			len += take;
			out[len] = '\0';
		}
	}
	close(pipefd[0]);
	/* a tool that closed its output may still run: wait until the deadline */
	while (!timed_out) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (now_ms() >= deadline) {
			timed_out = true;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	if (timed_out) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				return -errno;
	}
	if (timed_out)
		return -ETIMEDOUT;
	/* the tool's last newline is noise in an error message */
	while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = '\0';
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
out_env:
	if (env != environ)
		free(env);
	return r;
}
