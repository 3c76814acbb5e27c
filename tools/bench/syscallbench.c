/* syscallbench — the cost of entering and leaving the kernel: getppid()
 * through syscall(2), which no vDSO answers and no libc caches. Score:
 * system calls per second. */
#include "benchlib.h"

#include <sys/syscall.h>
#include <unistd.h>

static void getppid_loop(void *ctx, long long n)
{
	for (long long i = 0; i < n; i++)
		if (syscall(SYS_getppid) < 0)
			bench_fail("getppid");
}

int main(int argc, char **argv)
{
	return bench_ops_main("syscallbench", "getppid", getppid_loop, NULL, argc, argv);
}
