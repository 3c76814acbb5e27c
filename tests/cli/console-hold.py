#!/usr/bin/env python3
"""tests/cli/console-hold.py SOCKET — a console client that never reads its
terminal: listen on SOCKET (runc's --console-socket), take one pty master
(SCM_RIGHTS), print "held" and then hold the master without reading it until
SIGTERM, which closes it (the terminal's hangup) and exits 0.  Exits 1 if no
master arrived within 60 s."""
import os
import signal
import socket
import sys

srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
srv.listen(1)
srv.settimeout(60)
try:
    conn, _ = srv.accept()
    _, fds, _, _ = socket.recv_fds(conn, 4096, 4)
except (socket.timeout, OSError) as e:
    print("console-hold: no terminal arrived: %s" % e, file=sys.stderr)
    sys.exit(1)
if not fds:
    print("console-hold: no fd received", file=sys.stderr)
    sys.exit(1)
conn.close()
srv.close()


def hang_up(signo, frame):
    os.close(fds[0])
    sys.exit(0)


signal.signal(signal.SIGTERM, hang_up)
print("held", flush=True)
while True:
    signal.pause()
