/* SPDX-License-Identifier: BSD-3-Clause */
/* Detaching from the terminal (daemonize.h). */
#include "process/daemonize.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

int apexd_daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0) {
		int failure = apex_errno();
		apex_error("fork: %s", apex_strerror(failure));
		return failure;
	}
	if (pid > 0)
		_exit(EXIT_SUCCESS);
	if (setsid() < 0) {
		int failure = apex_errno();
		apex_error("setsid: %s", apex_strerror(failure));
		return failure;
	}
	if (chdir("/") < 0) {
		int failure = apex_errno();
		apex_error("chdir /: %s", apex_strerror(failure));
		return failure;
	}
	fd = open("/dev/null", O_RDWR);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		int failure = apex_errno();
		apex_error("/dev/null: %s", apex_strerror(failure));
		return failure;
	}
	if (fd > STDERR_FILENO)
		close(fd);
	return APEX_OK;
}
