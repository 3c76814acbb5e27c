#!/usr/bin/env python3
"""tests/cli/console-recv.py SOCKET [INPUT] — the receiving end of a runc-style
--console-socket: listen on SOCKET, take one pty master (SCM_RIGHTS), write
INPUT to it, copy what the terminal prints to stdout until the slave side
closes (EIO) or 20 s pass.  Exits 0 if a master fd arrived, 1 otherwise."""
import os
import select
import socket
import sys
import time

path = sys.argv[1]
data = sys.argv[2].encode() if len(sys.argv) > 2 else b""
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(30)
try:
    conn, _ = srv.accept()
except socket.timeout:
    print("console-recv: nobody connected", file=sys.stderr)
    sys.exit(1)
msg, fds, _, _ = socket.recv_fds(conn, 4096, 4)
if not fds:
    print("console-recv: no fd received", file=sys.stderr)
    sys.exit(1)
master = fds[0]
if os.isatty(master) is False and not os.path.exists("/proc/self/fd/%d" % master):
    sys.exit(1)
if data:
    os.write(master, data)
deadline = time.time() + 20
out = b""
while time.time() < deadline:
    r, _, _ = select.select([master], [], [], 0.5)
    if not r:
        continue
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode(errors="replace"))
sys.exit(0)
