/* execbench — program start cost: fork(), execve() of this same static
 * binary with "--child" (which exits at once), waitpid(). One file, no
 * dynamic loader. Score: fork+exec+exit+wait cycles per second. */
#include "benchlib.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void fork_exec_wait(void *ctx, long long n)
{
	const char *self = ctx;
	char *child_argv[] = { (char *)"execbench", (char *)"--child", NULL };

	for (long long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			bench_fail("fork");
		if (pid == 0) {
			execve(self, child_argv, environ);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0)
			bench_fail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			char what[PATH_MAX + 16];
			snprintf(what, sizeof(what), "execve %s", self);
			bench_error(what, "the child did not exit with status 0");
		}
	}
}

int main(int argc, char **argv)
{
	static char self[PATH_MAX];
	ssize_t len;

	if (argc == 2 && strcmp(argv[1], "--child") == 0)
		return 0;
	bench_init("execbench");
	/* the file itself, wherever and however it was started */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0)
		self[len] = '\0';
	else if (strchr(argv[0], '/'))
		snprintf(self, sizeof(self), "%s", argv[0]);
	else
		bench_fail("readlink /proc/self/exe");
	return bench_ops_main("execbench", "exec", fork_exec_wait, self, argc, argv);
}
