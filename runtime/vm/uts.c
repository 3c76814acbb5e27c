/* runtime/vm/uts.c — the hostname of a UTS namespace given by path.  A VM
 * pod cannot join a namespace of the host (the guest has its own kernel),
 * but a spec that joins one (CRI: the sandbox's) means "this pod's
 * hostname": it is read from there and given to the guest. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/report.h"
#include "vm/vm.h"

int vm_uts_hostname(const char *path, char *buf, size_t size, qp_error **err)
{
	char line[QP_REPORT_MAX];
	const char *rest;
	int fd, st;
	pid_t pid = qp_report_fork(&fd, "the UTS namespace reader", err);

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* a child joins the namespace: qpod itself stays where it is */
		char name[256] = "";
		qp_error *e = NULL;
		int ns = open(path, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWUTS) < 0 || gethostname(name, sizeof(name) - 1) < 0) {
			qp_fail(&e, errno, "UTS namespace \"%s\"", path);
			qp_report_err(fd, e, "");
			_exit(1);
		}
		qp_report_ok(fd, "%s", name);
		_exit(0);
	}
	int n = qp_report_read(fd, 5000, line, sizeof(line));
	close(fd);
	waitpid(pid, &st, 0);
	if (n < 0)
		return qp_error_set(err, QP_E_TIMEOUT, 0, "reading the hostname of \"%s\" timed out", path);
	if (qp_report_parse(line, &rest, "the UTS namespace reader died", err) < 0)
		return -1;
	if (strlen(rest) > QP_PROTO_MAX_HOSTNAME || strlen(rest) >= size)
		return qp_error_set(err, QP_E_INVALID, 0, "the hostname of \"%s\" is too long", path);
	snprintf(buf, size, "%s", rest);
	return 0;
}
