#!/usr/bin/env python3
"""tests/cli/fake-qemu.py - a stand-in for qemu-system-x86_64 (QPOD_QEMU) that
plays a hostile or broken guest on the VM channel, so the tests can check
that qpod ends such a pod with a clear error and never hangs or crashes.

FAKE_GUEST selects the behaviour once qpod connects to the channel socket
(the listening socket qpod passes in: the first -chardev socket,...,fd=N):
  garbage   bytes that are not a frame (bad magic)
  oversize  a HELLO header announcing a 1 GiB payload
  endless   a header for 100 bytes, then 10 bytes, then silence
  silent    nothing at all (the hello timeout)
  badtype   a well-formed frame of a type the guest may not send (RUN)
  hello     a valid HELLO, then no answer to anything (RUN included)
  badstart  a valid HELLO; RUN answered by a STARTED whose pid is out of
            range (what guest-init's spawn race once sent)
  flood     a valid HELLO; RUN answered by STARTED and then 512 KiB of
            STDOUT with no regard for credit: beyond the output's window
            (QP_PROTO_OUT_WINDOW) once the host's stdout is not read
Afterwards it waits until killed, like a VM that hangs."""
import os
import socket
import struct
import sys
import time

MAGIC = 0x444F5051
# the protocol version qpod speaks (guest-init/protocol.h), which
# tests/cli/helpers.bash reads from the header: this runs in QEMU's jail
VERSION = int(os.environ["FAKE_PROTO_VERSION"])


def frame(mtype, payload):
    return struct.pack("<IHHI", MAGIC, VERSION, mtype, len(payload)) + payload


def main():
    fd = None
    for i, a in enumerate(sys.argv):
        if a == "-chardev" and fd is None:
            for part in sys.argv[i + 1].split(","):
                if part.startswith("fd="):
                    fd = int(part[3:])
    if fd is None:
        sys.exit("fake-qemu: no -chardev fd")
    srv = socket.socket(fileno=fd)
    conn, _ = srv.accept()
    mode = os.environ.get("FAKE_GUEST", "silent")
    if mode == "garbage":
        conn.sendall(b"this is not a qpod frame at all\n" * 4)
    elif mode == "oversize":
        conn.sendall(struct.pack("<IHHI", MAGIC, VERSION, 1, 1 << 30))
    elif mode == "endless":
        conn.sendall(struct.pack("<IHHI", MAGIC, VERSION, 1, 100) + b"x" * 10)
    elif mode == "badtype":
        conn.sendall(frame(2, b""))
    elif mode in ("hello", "badstart", "flood"):
        conn.sendall(frame(1, struct.pack("<HHIQQ", VERSION, 0, 0, 1000, 2000)))
    # keep reading (a full socket buffer would block the host's writes)
    conn.settimeout(None)
    answered = False
    while True:
        if not conn.recv(65536):
            time.sleep(60)
        elif mode == "badstart" and not answered:
            conn.sendall(frame(3, struct.pack("<IQQ", 0xFFFFFFFF, 1, 2)))
            answered = True
        elif mode == "flood" and not answered:
            conn.sendall(frame(3, struct.pack("<IQQ", 2, 1, 2)))
            for _ in range(8):
                conn.sendall(frame(4, b"y" * 65536))
            answered = True


main()
