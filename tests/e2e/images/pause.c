/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod sandbox's process for the e2e cluster's pause image: it holds the
 * pod's namespaces open, reaps children it inherits as PID 1, and exits on
 * SIGINT or SIGTERM. Built statically so the image needs nothing else.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction quit = {.sa_handler = stop};
	struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};

	if (sigaction(SIGINT, &quit, NULL) || sigaction(SIGTERM, &quit, NULL) ||
	    sigaction(SIGCHLD, &child, NULL))
		return 1;
	for (;;)
		pause();
}
