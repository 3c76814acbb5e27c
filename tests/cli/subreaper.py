#!/usr/bin/env python3
"""tests/cli/subreaper.py CMD ARGS... — stand in for containerd's shim or
conmon: become a child subreaper (prctl PR_SET_CHILD_SUBREAPER), run CMD,
then reap every process that ends up as our child (the pods and exec relays
that CMD leaves behind) and print one line per reaped process:
"PID exit CODE" or "PID signal N".  Stops when no child is left, or after
QPOD_REAP_TIMEOUT seconds (default 60: then exits 2)."""
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("subreaper: prctl failed")
signal.signal(signal.SIGALRM, lambda *a: sys.exit(2))
signal.alarm(int(os.environ.get("QPOD_REAP_TIMEOUT", "60")))
cmd = os.fork()
if cmd == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
while True:
    try:
        pid, st = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if os.WIFEXITED(st):
        line = "%d exit %d" % (pid, os.WEXITSTATUS(st))
    else:
        line = "%d signal %d" % (pid, os.WTERMSIG(st))
    if pid == cmd:
        line = "cmd " + line
    print(line, flush=True)
