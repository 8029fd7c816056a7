// SPDX-License-Identifier: Apache-2.0
/*
 * The pod sandbox's process: holds the pod's namespaces, reaps the zombies a shared PID
 * namespace leaves it, exits on SIGINT or SIGTERM. Built static for a FROM scratch image.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	_exit(128 + sig);
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction stop = { .sa_handler = on_stop };
	struct sigaction child = { .sa_handler = on_child, .sa_flags = SA_NOCLDSTOP };

	if (sigaction(SIGINT, &stop, NULL) || sigaction(SIGTERM, &stop, NULL) ||
	    sigaction(SIGCHLD, &child, NULL))
		return 1;
	for (;;)
		pause();
}
