/* guest-init/tinyinit.c — see tinyinit.h.  All signals are blocked and taken
 * with sigwaitinfo(), so there are no handlers and no races between a
 * SIGCHLD and the wait loop. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest-init/tinyinit.h"

int tinyinit_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

void tinyinit_reset_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int tinyinit_run(tinyinit_exec_fn fn, void *arg, const struct tinyinit_hooks *hooks)
{
	sigset_t all, old;
	pid_t child;
	int code = -1;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	child = fork();
	if (child < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = e;
		return -1;
	}
	if (child == 0) {
		/* the workload starts with every signal at its default */
		tinyinit_reset_signals();
		fn(arg);
		_exit(127);
	}
	if (hooks && hooks->on_spawn)
		hooks->on_spawn(child, arg);

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&all, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/* forward; stop/continue signals included, so a pod can
			 * be paused from outside through its init */
			kill(child, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t p = waitpid(-1, &status, WNOHANG);
			if (p <= 0)
				break;
			if (p == child)
				code = tinyinit_exit_code(status);
			else if (hooks && hooks->on_other_exit)
				hooks->on_other_exit(p, tinyinit_exit_code(status), arg);
		}
		if (code >= 0)
			return code;
	}
}
