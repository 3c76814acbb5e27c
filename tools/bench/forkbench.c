/* forkbench — process creation cost: fork(), the child _exit(0)s at once,
 * the parent waitpid()s it. Score: fork+exit+wait cycles per second. */
#include "benchlib.h"

#include <sys/wait.h>
#include <unistd.h>

static void fork_wait(void *ctx, long long n)
{
	for (long long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			bench_fail("fork");
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) < 0)
			bench_fail("waitpid");
	}
}

int main(int argc, char **argv)
{
	return bench_ops_main("forkbench", "fork", fork_wait, NULL, argc, argv);
}
