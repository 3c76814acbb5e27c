#!/usr/bin/env python3
"""tests/cli/ptyrun.py — run a command on a new pseudo-terminal, for the
CLI tests of interactive clients (podman run -it, podman exec -it).

Usage: ptyrun.py [--timeout SECS] [--size ROWSxCOLS] [--console-socket PATH]
                 [--send-after TEXT INPUT | --resize-after TEXT ROWSxCOLS]...
                 -- CMD ARGS...

CMD gets the terminal's slave as stdin, stdout, stderr and controlling
terminal (it is a session leader, as a shell would make it). Everything it
writes to the terminal is copied to our stdout. Each --send-after pair types
INPUT (backslash escapes such as \\r are decoded) once TEXT has appeared in
the output after the previous send; pairs go in order. Exit status: CMD's
own, 128+N when signal N killed it, 124 when it did not finish within the
timeout (default 30 s; its process group is then killed with SIGKILL).
A --resize-after pair sets the terminal's size once TEXT has appeared (in
order with the sends).

With --console-socket, CMD (e.g. qpod create/exec --console-socket PATH)
runs with our stdio, and the terminal is the pty master that arrives on
PATH (runc's protocol); the run ends when the terminal's other side closes
(and CMD, if it still runs, is waited for).
"""
import socket
import os
import pty
import select
import signal
import struct
import sys
import termios
import fcntl
import time


def set_size(master, rows, cols):
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def console_fork(path, cmd, timeout):
    """Start cmd, take the pty master it sends to the socket at path."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(timeout)
    pid = os.fork()
    if pid == 0:
        srv.close()
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write("ptyrun.py: %s: %s\n" % (cmd[0], e.strerror))
        os._exit(127)
    try:
        conn, _ = srv.accept()
        _, fds, _, _ = socket.recv_fds(conn, 4096, 4)
    except (socket.timeout, OSError) as e:
        sys.stderr.write("ptyrun.py: no terminal arrived on %s: %s\n" % (path, e))
        fds = []
    if not fds:
        return pid, None
    return pid, fds[0]


def main(argv):
    timeout = 30.0
    rows, cols = 24, 80
    sends = []
    sock_path = None
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--timeout":
            timeout = float(argv[i + 1])
            i += 2
        elif a == "--size":
            rows, cols = (int(x) for x in argv[i + 1].split("x"))
            i += 2
        elif a == "--send-after":
            text = argv[i + 1].encode()
            data = argv[i + 2].encode().decode("unicode_escape").encode()
            sends.append((text, data))
            i += 3
        elif a == "--resize-after":
            text = argv[i + 1].encode()
            size = tuple(int(x) for x in argv[i + 2].split("x"))
            sends.append((text, size))
            i += 3
        elif a == "--console-socket":
            sock_path = argv[i + 1]
            i += 2
        else:
            sys.stderr.write("ptyrun.py: unknown option %s\n" % a)
            return 2
    cmd = argv[i + 1:]
    if not cmd:
        sys.stderr.write(__doc__)
        return 2

    if sock_path:
        pid, master = console_fork(sock_path, cmd, timeout)
        if master is None:
            return 1
    else:
        pid, master = pty.fork()
        if pid == 0:
            try:
                os.execvp(cmd[0], cmd)
            except OSError as e:
                sys.stderr.write("ptyrun.py: %s: %s\n" % (cmd[0], e.strerror))
            os._exit(127)
    set_size(master, rows, cols)

    deadline = time.monotonic() + timeout
    seen = b""  # output since the last send
    status = None
    timed_out = False
    out = sys.stdout.buffer
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        if status is None:
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid == pid:
                status = st
                # the child is gone: drain what is left, briefly (a
                # console's terminal lives on: its end is the master's EOF)
                if not sock_path:
                    deadline = min(deadline, time.monotonic() + 1.0)
        r, _, _ = select.select([master], [], [], min(left, 0.1))
        if not r:
            continue
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: every slave fd is closed
            data = b""
        if not data:
            break
        out.write(data)
        out.flush()
        if sends:  # only what a step waits for is kept (a flood is not)
            seen += data
        while sends and sends[0][0] in seen:
            seen = seen[seen.index(sends[0][0]) + len(sends[0][0]):]
            what = sends.pop(0)[1]
            if isinstance(what, tuple):
                set_size(master, *what)
            else:
                os.write(master, what)

    if status is None and not timed_out:
        # EOF before the child finished: wait for it within the deadline
        while time.monotonic() < deadline:
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid == pid:
                status = st
                break
            time.sleep(0.05)
        else:
            timed_out = True
    if timed_out and status is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        sys.stderr.write("ptyrun.py: timed out after %gs: %s\n" % (timeout, " ".join(cmd)))
        return 124
    os.close(master)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
