"""tools/cri/proc_events.py: how long the runtime's own commands took, seen
from the kernel, for bench_cri.py's "where the time goes". containerd's
runc v2 shim runs the runtime binary (runc, qpod) once per OCI command
(create, start, state, ...); the kernel's process connector (netlink,
NETLINK_CONNECTOR, root only) reports every fork, exec and exit with a
CLOCK_MONOTONIC timestamp. A watcher process (forked before any gRPC
thread exists) follows the shims whose command line names the bench's
private directory, and writes one JSON line per child process they ran:

    {"t0": ms, "t1": ms, "argv": [...] or null}

t0 = the shim forked it, t1 = it exited (a VM pod's monitor, which `qpod
create` forks, is the runtime's child, not the shim's: not counted).
Nothing here changes what is measured: the shims and runtimes run as
before, the watcher only listens."""

import ctypes
import json
import os
import signal
import socket
import struct

NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_EVENT_FORK = 0x00000001
PROC_EVENT_EXEC = 0x00000002
PROC_EVENT_EXIT = 0x80000000
NLMSG_HDR = struct.Struct("=IHHII")
CN_MSG = struct.Struct("=IIIIHH")
EVENT_HDR = struct.Struct("=IIQ")


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]] or None


def _listen(marker, out_path, ready_w):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((os.getpid(), CN_IDX_PROC))
    op = struct.pack("=I", PROC_CN_MCAST_LISTEN)
    cn = CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(op), 0) + op
    s.send(NLMSG_HDR.pack(NLMSG_HDR.size + len(cn), 3, 0, 0, os.getpid()) + cn)  # 3: NLMSG_DONE
    os.write(ready_w, b"1")
    os.close(ready_w)
    shims, pending = set(), {}
    mk = marker.encode()
    with open(out_path, "w") as out:
        while True:
            try:
                data = s.recv(65536)
            except OSError:  # ENOBUFS: events lost under load; go on
                continue
            off = NLMSG_HDR.size + CN_MSG.size
            if len(data) < off + EVENT_HDR.size:
                continue
            what, _cpu, ts = EVENT_HDR.unpack_from(data, off)
            body = off + EVENT_HDR.size
            ms = ts / 1e6
            if what == PROC_EVENT_FORK:
                ppid, ptgid, cpid, ctgid = struct.unpack_from("=IIII", data, body)
                if ptgid in shims and cpid == ctgid:
                    pending[cpid] = [ms, None]
            elif what == PROC_EVENT_EXEC:
                pid, tgid = struct.unpack_from("=II", data, body)
                if pid != tgid:
                    continue
                argv = _cmdline(pid)
                text = b"\0".join(a.encode() for a in argv or [])
                if b"containerd-shim" in text and mk in text:
                    shims.add(pid)
                    pending.pop(pid, None)  # the shim that a shim started
                elif pid in pending and pending[pid][1] is None:
                    pending[pid][1] = argv
            elif what == PROC_EVENT_EXIT:
                pid, tgid = struct.unpack_from("=II", data, body)
                if pid != tgid:
                    continue
                shims.discard(pid)
                p = pending.pop(pid, None)
                if p:
                    out.write(json.dumps({"t0": p[0], "t1": ms, "argv": p[1]}) + "\n")
                    out.flush()


class Watcher:
    """A forked listener writing to out_path; stop() ends it."""

    def __init__(self, marker, out_path):
        self.pid = None
        self.path = out_path
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            # it ends with the bench, however the bench ends (1: PR_SET_PDEATHSIG)
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
            if os.getppid() == 1:
                os._exit(0)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                _listen(marker, out_path, w)
            finally:
                os._exit(1)
        os.close(w)
        ok = os.read(r, 1)
        os.close(r)
        if not ok:
            os.waitpid(pid, 0)
            raise OSError("the process connector (NETLINK_CONNECTOR) is not available")
        self.pid = pid

    def records(self):
        out = []
        try:
            with open(self.path) as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass  # a line being written
        except OSError:
            pass
        return out

    def stop(self):
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None
