#!/usr/bin/python3
"""tools/cri/bench_cri.py: the driver of `qpod bench cri` (runtime/bench/
scenario_cri.c execs it): pod start as a kubelet sees it, through a CRI
endpoint, for each runtime handler side by side. It does the CRI calls
(cri.py beside it) and the timing, and writes one JSON object to --out:

    {"handlers": [...], "endpoint": "...", "private": true|false,
     "results": [{"name": H, "metric": M, "unit": U, "samples": [...]}, ...],
     "phases": {H: {PHASE: avg_ms, ...}, ...},
     "partial": false, "error": null | "one line"}

which the C side turns into a qpod result file. Exit status 0, or 1 with
"error" set (what was measured before stays in "results").

Per pod: start = RunPodSandbox called -> its first container RUNNING
(phases: run_pod_sandbox, create_container, start_container, wait_running);
stop = StopPodSandbox + RemovePodSandbox (one figure); the runtime's own share of the
start (runtime_ms: the wall time of the runtime commands, runc's or
qpod's, that the shims ran for the sandbox and that container within the
start, from the kernel's process events: proc_events.py) and the rest
(containerd_shim_ms: containerd, the CRI plugin, CNI, the shim). Memory:
the drop of the host's MemAvailable per running pod, pods of 1 and of 2
containers (mem_1c_mb, mem_2c_mb, mem_4c_mb), and the PSS of each such
pod's processes (pss_1c_mb, pss_2c_mb, pss_4c_mb: the shim and all below
it).

Without --cri-socket it starts a private containerd (CRI plugin; handlers
runc, qpod and qpod-vm as docs/containerd.md configures them; CNI's bridge
plugin with host-local addresses) in a network namespace of its own, under a
temporary directory, and imports the images there (an OCI layout made from
--image). Everything it made is removed at the end, on error and on
SIGINT/SIGTERM: pods, images, containerd and its shims, mounts, cgroups,
the temporary directory."""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cri  # noqa: E402
import proc_events  # noqa: E402

CRI_NS = "k8s.io"  # the containerd namespace of the CRI
CALL_TIMEOUT = 120.0
RUNNING_TIMEOUT = 60.0


class BenchError(Exception):
    pass


class Interrupted(Exception):
    pass


def now_ms():
    return time.monotonic() * 1000.0


def pod_pss_kb(sid):
    """The PSS of a pod's processes: its shim (containerd 1.6 runs one per
    pod, named by the sandbox's id) and everything below it (the pause
    and workload processes, a VM's monitor and QEMU)."""
    children, shim = {}, None
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(p))
            if shim is None:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    argv = f.read().split(b"\0")
                if b"-id" in argv and sid.encode() in argv and b"containerd-shim" in argv[0]:
                    shim = int(p)
        except (OSError, IndexError, ValueError):
            pass
    if shim is None:
        return None
    total, todo = 0, [shim]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise BenchError("/proc/meminfo has no MemAvailable")


class Results:
    """Rows and phase sums, in first-seen order."""

    def __init__(self):
        self.rows = {}
        self.phase_sum = {}

    def sample(self, name, metric, unit, value):
        self.rows.setdefault((name, metric), (unit, []))[1].append(value)

    def phase(self, name, phase, ms):
        s = self.phase_sum.setdefault(name, {}).setdefault(phase, [0.0, 0])
        s[0] += ms
        s[1] += 1

    def json(self):
        return {
            "results": [
                {"name": n, "metric": m, "unit": u, "samples": s}
                for (n, m), (u, s) in self.rows.items()
            ],
            "phases": {
                n: {p: v[0] / v[1] for p, v in ph.items() if v[1]}
                for n, ph in self.phase_sum.items()
            },
        }


# ---- the private containerd ---------------------------------------------------


def oci_image(rootfs, out, name, cmd, work):
    """An OCI image layout tarball of one uncompressed layer (the tar of
    rootfs), named by io.containerd.image.name for `ctr images import`."""
    blobs = os.path.join(work, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)

    def blob(data):
        d = hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, d), "wb") as f:
            f.write(data)
        return "sha256:" + d, len(data)

    layer = os.path.join(work, "layer.tar")
    r = subprocess.run(
        ["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
         "-C", rootfs, "-cf", layer, "."],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise BenchError("image %s: tar of %s: %s" % (name, rootfs, last_line(r.stderr)))
    h = hashlib.sha256()
    with open(layer, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    ld = "sha256:" + h.hexdigest()
    ls = os.path.getsize(layer)
    os.replace(layer, os.path.join(blobs, ld[7:]))
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": cmd, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [ld]}}).encode()
    cd, cs = blob(config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ld, "size": ls}]}).encode()
    md, ms = blob(manifest)
    index = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ms,
                       "platform": {"architecture": "amd64", "os": "linux"},
                       "annotations": {"io.containerd.image.name": name,
                                       "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}}]})
    with open(os.path.join(work, "index.json"), "w") as f:
        f.write(index)
    with open(os.path.join(work, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion": "1.0.0"}')
    with tarfile.open(out, "w") as t:
        for n in ("oci-layout", "index.json", "blobs"):
            t.add(os.path.join(work, n), arcname=n)
    shutil.rmtree(work)


def containerd_config(w, qpod, pause_image):
    rt = ""
    for name, binary, root, ann in (("runc", "runc", w + "/runc", False),
                                    ("qpod", qpod, w + "/qpod/qpod", True),
                                    ("qpod-vm", qpod, w + "/qpod/qpod-vm", True)):
        rt += """
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%(n)s]
      runtime_type = "io.containerd.runc.v2"
      %(ann)s
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%(n)s.options]
        BinaryName = "%(b)s"
        Root = "%(r)s"
""" % {"n": name, "b": binary, "r": root, "ann": 'pod_annotations = ["qpod.*"]' if ann else ""}
    return """version = 2
root = "%(w)s/root"
state = "%(w)s/state"
oom_score = 0

[grpc]
  address = "%(w)s/containerd.sock"

[ttrpc]
  address = "%(w)s/containerd.sock.ttrpc"

[debug]
  address = ""
  level = "warn"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "%(w)s/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%(pause)s"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
%(rt)s
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%(w)s/cni/bin"
    conf_dir = "%(w)s/cni/net.d"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "%(w)s/certs.d"
""" % {"w": w, "pause": pause_image, "rt": rt}


def cni_setup(w):
    os.makedirs(w + "/cni/bin")
    os.makedirs(w + "/cni/net.d")
    for p in ("bridge", "host-local", "loopback"):
        src = "/usr/lib/cni/" + p
        if not os.access(src, os.X_OK):
            raise BenchError("CNI plugin %s not found (Debian package containernetworking-plugins)" % src)
        os.symlink(src, w + "/cni/bin/" + p)
    conf = {"cniVersion": "0.4.0", "name": "qpod-bench",
            "plugins": [{"type": "bridge", "bridge": "qpbench0", "isGateway": True, "ipMasq": False,
                         "ipam": {"type": "host-local", "dataDir": w + "/cni/ipam",
                                  "ranges": [[{"subnet": "10.214.0.0/16"}]]}}]}
    with open(w + "/cni/net.d/10-qpod-bench.conflist", "w") as f:
        json.dump(conf, f)


class Private:
    """containerd started here, in a network namespace of its own (CNI's
    bridge and the pods' host-side veths live there, not in the host's)."""

    def __init__(self, w, qpod, pause_image):
        self.w = w
        self.sock = w + "/containerd.sock"
        self.proc = None
        self.cgroup_parent = "/qpod-bench-" + os.path.basename(w).split(".")[-1]
        self.had_run_containerd = os.path.exists("/run/containerd")
        for t in ("containerd", "unshare", "ip"):
            if not shutil.which(t):
                raise BenchError("%s not found (Debian packages containerd, util-linux, iproute2)" % t)
        cni_setup(w)
        with open(w + "/config.toml", "w") as f:
            f.write(containerd_config(w, qpod, pause_image))

    def start(self, client_factory):
        log = open(self.w + "/containerd.log", "wb")
        # its own session: the terminal's Ctrl-C must not stop containerd
        # before the pods are removed
        self.proc = subprocess.Popen(
            ["unshare", "--net", "--", "sh", "-c",
             'ip link set lo up && exec containerd --config "$1"', "sh", self.w + "/config.toml"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError("containerd exited during start: %s" % self.log_tail())
            if os.path.exists(self.sock):
                c = client_factory(self.sock)
                try:
                    c.call("Version", {}, timeout=2)
                    return c
                except cri.CriError:
                    c.close()
            time.sleep(0.1)
        raise BenchError("containerd did not answer on %s within 30 s: %s" % (self.sock, self.log_tail()))

    def log_tail(self):
        try:
            with open(self.w + "/containerd.log", errors="replace") as f:
                lines = [l.strip() for l in f if l.strip()]
            return lines[-1][:300] if lines else "(no log)"
        except OSError:
            return "(no log)"

    def stop(self, sandboxes):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # shims, qpod, QEMU naming the directory: TERM, then KILL
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = procs_naming(self.w)
            for p in pids:
                try:
                    os.kill(p, sig)
                except ProcessLookupError:
                    pass
            for _ in range(50):
                if not procs_naming(self.w):
                    break
                time.sleep(0.1)
        for sid in sandboxes:  # the sockets of shims that were killed
            sock = "/run/containerd/s/" + hashlib.sha256(
                ("%s/%s/%s" % (self.sock, CRI_NS, sid)).encode()).hexdigest()
            try:
                os.unlink(sock)
            except OSError:
                pass
        for m in mounts_under(self.w):
            if subprocess.run(["umount", m], stderr=subprocess.DEVNULL).returncode:
                subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
        remove_cgroups(os.path.basename(self.cgroup_parent))
        if not self.had_run_containerd:
            for d in ("/run/containerd/s", "/run/containerd/fifo", "/run/containerd"):
                try:
                    os.rmdir(d)
                except OSError:
                    pass


def procs_naming(text):
    out = []
    me = os.getpid()
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if text.encode() in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


def mounts_under(w):
    ms = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4]
            if mp == w or mp.startswith(w + "/"):
                ms.append(mp)
    return sorted(ms, key=len, reverse=True)


def remove_cgroups(parent):
    base = "/sys/fs/cgroup"
    for top in [base] + [os.path.join(base, d) for d in os.listdir(base)]:
        d = os.path.join(top, parent)
        if not os.path.isdir(d):
            continue
        for root, dirs, _ in os.walk(d, topdown=False):
            for x in dirs:
                try:
                    os.rmdir(os.path.join(root, x))
                except OSError:
                    pass
        try:
            os.rmdir(d)
        except OSError:
            pass


def last_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1][:300] if lines else "(no output)"


# ---- the bench ------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.a = args
        self.res = Results()
        self.client = None
        self.private = None
        self.endpoint = args.cri_socket
        self.live = {}  # sandbox id -> handler, not yet removed
        self.all_sandboxes = []
        self.images = []  # names imported here
        self.handlers = []
        self.watch = None  # proc_events.Watcher
        self.windows = []  # measured starts: (handler, t0, t1, ids)
        self.lock = threading.Lock()
        tag = uuid.uuid4().hex[:12]
        self.image = "localhost/qpod-bench/busybox:" + tag
        self.pause = "localhost/qpod-bench/pause:" + tag
        self.w = tempfile.mkdtemp(prefix="qpod-cri.", dir="/tmp")
        self.gen = self.w + "/gen"
        os.makedirs(self.w + "/logs")

    def client_for(self, sock):
        return cri.Client(sock, self.gen)

    def progress(self, text):
        if self.a.progress:
            sys.stderr.write("\r\033[Kbench cri: " + text)
            sys.stderr.flush()

    # -- setup --

    def setup(self):
        try:
            import grpc  # noqa: F401
            import google.protobuf  # noqa: F401
        except ImportError as e:
            raise BenchError("the CRI client needs python3-grpcio and python3-protobuf (%s)" % e)
        if not shutil.which("protoc"):
            raise BenchError("protoc not found (Debian package protobuf-compiler)")
        if self.endpoint and not os.path.exists(self.endpoint):
            raise BenchError("CRI endpoint %s: no such socket" % self.endpoint)
        # before any gRPC thread exists: the watcher is a fork; the shims'
        # command lines name the endpoint (-address)
        try:
            self.watch = proc_events.Watcher(self.endpoint or self.w, self.w + "/proc-events.jsonl")
        except OSError:
            self.watch = None  # no runtime_ms rows then
        if self.endpoint:
            if not os.path.exists(self.endpoint):
                raise BenchError("CRI endpoint %s: no such socket" % self.endpoint)
            self.client = self.client_for(self.endpoint)
            try:
                self.client.call("Version", {}, timeout=5)
            except cri.CriError as e:
                raise BenchError("CRI endpoint %s does not answer: %s: %s" % (self.endpoint, e.code, e.details))
        else:
            self.private = Private(self.w, self.a.qpod, self.pause)
            self.progress("starting containerd")
            self.client = self.private.start(self.client_for)
            self.endpoint = self.private.sock
        self.find_handlers()
        self.import_images()

    def find_handlers(self):
        try:
            st = self.client.call("Status", {"verbose": True}, timeout=10)
            config = json.loads(st.get("info", {}).get("config", "{}"))
        except (cri.CriError, ValueError) as e:
            raise BenchError("CRI endpoint %s: Status: %s" % (self.endpoint, e))
        runtimes = config.get("containerd", {}).get("runtimes", {}) or {}
        # runc first: the ratios are against the first row of each metric
        configured = sorted(runtimes, key=lambda h: (h != "runc", h))
        where = self.a.cri_socket or "the private containerd"
        if not configured:
            raise BenchError("CRI endpoint %s names no runtime handlers (Status: no containerd.runtimes)"
                             % self.endpoint)
        wanted = [h for h in self.a.handlers.split(",") if h] if self.a.handlers else []
        for h in wanted:
            if h not in runtimes:
                raise BenchError("handler \"%s\" is not configured at %s (configured: %s)"
                                 % (h, where, ", ".join(configured)))
        self.handlers = sorted(wanted, key=lambda h: h != "runc") if wanted else configured

    def ctr(self, *args):
        return subprocess.run(["ctr", "-a", self.endpoint, "-n", CRI_NS] + list(args),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=300)

    def import_images(self):
        if not shutil.which("ctr"):
            raise BenchError("ctr not found (Debian package containerd)")
        todo = [(self.image, ["/bin/sh"])]
        if self.private:
            todo.append((self.pause, ["/bin/sleep", "2147483647"]))
        for name, cmd in todo:
            self.progress("importing %s" % name)
            tar = self.w + "/image.tar"
            oci_image(self.a.image, tar, name, cmd, self.w + "/img")
            r = self.ctr("images", "import", tar)
            os.unlink(tar)
            if r.returncode != 0:
                raise BenchError("image %s from %s cannot be imported at %s: %s"
                                 % (name, self.a.image, self.endpoint, last_line(r.stderr)))
            self.images.append(name)

    # -- one pod --

    def pod_config(self, h, uid):
        cfg = {"metadata": {"name": "qpod-bench-" + uid[:12], "uid": uid, "namespace": "qpod-bench",
                            "attempt": 0},
               "hostname": "qpod-bench", "log_directory": self.w + "/logs",
               "labels": {"qpod.bench": "cri"},
               "annotations": {"qpod.mode": "vm"} if h == "qpod-vm" else {},
               "linux": {"security_context": {"namespace_options": {"network": "POD", "pid": "CONTAINER",
                                                                    "ipc": "POD"}}}}
        if self.private:
            cfg["linux"]["cgroup_parent"] = self.private.cgroup_parent
        return cfg

    def container_config(self, i):
        return {"metadata": {"name": "c%d" % i, "attempt": 0}, "image": {"image": self.image},
                "command": ["/bin/sleep", "3600"], "log_path": "c%d.log" % i,
                "linux": {"security_context": {"namespace_options": {"network": "POD", "pid": "CONTAINER",
                                                                     "ipc": "POD"}}}}

    def call(self, method, req):
        try:
            return self.client.call(method, req, timeout=CALL_TIMEOUT)
        except cri.CriError as e:
            raise BenchError("%s: %s: %s" % (method, e.code, e.details))

    def start_pod(self, h, ncont):
        """A pod of ncont containers until its first is RUNNING: (sandbox,
        containers, {phase: ms}, start ms)."""
        uid = uuid.uuid4().hex
        cfg = self.pod_config(h, uid)
        ph = {}
        t0 = now_ms()
        sid = self.call("RunPodSandbox", {"config": cfg, "runtime_handler": h})["pod_sandbox_id"]
        t1 = now_ms()
        with self.lock:
            self.live[sid] = h
            self.all_sandboxes.append(sid)
        ph["run_pod_sandbox"] = t1 - t0
        cids = []
        ph["create_container"] = ph["start_container"] = ph["wait_running"] = 0.0
        end = None
        for i in range(ncont):
            a = now_ms()
            cid = self.call("CreateContainer", {"pod_sandbox_id": sid, "config": self.container_config(i),
                                                "sandbox_config": cfg})["container_id"]
            b = now_ms()
            self.call("StartContainer", {"container_id": cid})
            c = now_ms()
            cids.append(cid)
            deadline = c + RUNNING_TIMEOUT * 1000
            while True:
                st = self.call("ContainerStatus", {"container_id": cid})["status"]["state"]
                if st == "CONTAINER_RUNNING":
                    break
                if st != "CONTAINER_CREATED" or now_ms() > deadline:
                    raise BenchError("%s: container %s is %s, not running" % (h, cid[:12], st))
                time.sleep(0.005)
            d = now_ms()
            if i == 0:
                ph["create_container"], ph["start_container"], ph["wait_running"] = b - a, c - b, d - c
                end = d
        return sid, cids, ph, end - t0, t0

    def stop_pod(self, sid):
        t0 = now_ms()
        self.call("StopPodSandbox", {"pod_sandbox_id": sid})
        self.call("RemovePodSandbox", {"pod_sandbox_id": sid})
        t1 = now_ms()
        with self.lock:
            self.live.pop(sid, None)
        return t1 - t0

    def runtime_shares(self):
        """runtime_ms and containerd_shim_ms of every measured start: the
        runtime commands naming the pod's sandbox or container, clipped to
        its start's window."""
        if not self.watch:
            return
        time.sleep(0.5)  # the watcher writes an exit a moment after it
        recs = [r for r in self.watch.records() if r.get("argv")]
        for h, t0, t1, ids in self.windows:
            own = 0.0
            for r in recs:
                if r["t0"] < t1 and r["t1"] > t0 and any(i in r["argv"] for i in ids):
                    own += min(r["t1"], t1) - max(r["t0"], t0)
            self.res.sample(h, "runtime_ms", "ms", own)
            self.res.sample(h, "containerd_shim_ms", "ms", (t1 - t0) - own)

    # -- rounds --

    def round(self, h, n, record):
        """n pods of one container at once (n = 1: serial)."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=n) as ex:
            t0 = now_ms()
            started = list(ex.map(lambda _: self.start_pod(h, 1), range(n)))
            wall = now_ms() - t0
            stopped = list(ex.map(lambda s: self.stop_pod(s[0]), started))
        if not record:
            return
        for sid, cids, ph, ms, start in started:
            self.res.sample(h, "start_ms", "ms", ms)
            for p, v in ph.items():
                self.res.phase(h, p, v)
            self.windows.append((h, start, start + ms, [sid, cids[0]]))
        # the phases are the start's (the report stacks them into it);
        # the stop is one figure
        for ms in stopped:
            self.res.sample(h, "stop_ms", "ms", ms)
        if n > 1:
            starts = sorted(s[3] for s in started)
            self.res.sample(h, "start_p90_ms", "ms", starts[min(n - 1, int(0.9 * n + 0.5) - 1)])
            self.res.sample(h, "wall_ms", "ms", wall)

    def memory(self, h, ncont, pods):
        """MemAvailable before and after `pods` pods of ncont containers,
        started one after another and left running: the drop per pod (the
        host's view, as noisy as the machine); and each pod's processes'
        PSS (its own view: a sample per pod)."""
        time.sleep(0.5)
        before = mem_available_kb()
        sids, pss = [], []
        try:
            for _ in range(pods):
                sids.append(self.start_pod(h, ncont)[0])
            time.sleep(1.0)
            after = mem_available_kb()
            pss = [pod_pss_kb(s) for s in sids]
        finally:
            for s in sids:
                self.stop_pod(s)
        self.res.sample(h, "mem_%dc_mb" % ncont, "MB", (before - after) / 1024.0 / pods)
        for kb in pss:
            if kb is not None:
                self.res.sample(h, "pss_%dc_mb" % ncont, "MB", kb / 1024.0)

    def vm_root(self):
        return self.w + "/qpod/qpod-vm/" + CRI_NS

    def spares(self, *args):
        """`qpod spares ARGS` in the private qpod-vm handler's state root."""
        r = subprocess.run([self.a.qpod, "--root", self.vm_root(), "spares"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if r.returncode != 0:
            raise BenchError("qpod spares %s: %s" % (args[0], last_line(r.stderr)))
        return r.stdout

    def fill_spares(self):
        """--spares N: the qpod-vm handler's sandboxes take spares (kept at N,
        refilled in the background as they are taken)."""
        if not self.a.spares or "qpod-vm" not in self.handlers:
            return
        if not self.private:
            raise BenchError("--spares needs the private containerd (its qpod-vm root)")
        self.progress("spares: %d for qpod-vm" % self.a.spares)
        self.spares("fill", "--count", str(self.a.spares))
        self.spares_filled = True

    def drain_spares(self):
        """The pool's end: drained, then waited for until no holder is left
        (a refill may still be making one)."""
        if not getattr(self, "spares_filled", False):
            return
        for _ in range(120):
            try:
                self.spares("drain")
                left = json.loads(self.spares("list", "--format", "json") or "[]")
            except (BenchError, ValueError, subprocess.SubprocessError):
                left = []
            if not [s for s in left if s.get("status") != "taken"]:
                return
            time.sleep(0.5)

    def run(self):
        self.fill_spares()
        n = self.a.parallel or 1
        total = self.a.warmup + self.a.runs
        for r in range(total):
            what = ("warm-up %d/%d" % (r + 1, self.a.warmup) if r < self.a.warmup
                    else "round %d/%d" % (r - self.a.warmup + 1, self.a.runs))
            for h in self.handlers:
                self.progress("%s, %s%s" % (what, h, " (%d pods)" % n if n > 1 else ""))
                self.round(h, n, r >= self.a.warmup)
        self.runtime_shares()
        for h in self.handlers:
            for k in (1, 2, 4):
                self.progress("memory, %s, pods of %d container%s" % (h, k, "s" if k > 1 else ""))
                self.memory(h, k, self.a.mem_pods)

    # -- cleanup --

    def cleanup(self):
        for sid in list(self.live):
            for m in ("StopPodSandbox", "RemovePodSandbox"):
                try:
                    self.client.call(m, {"pod_sandbox_id": sid}, timeout=60)
                except cri.CriError:
                    pass
            self.live.pop(sid, None)
        if not self.private:
            for name in self.images:
                try:
                    self.ctr("images", "rm", name)
                except (OSError, subprocess.SubprocessError):
                    pass
        self.drain_spares()
        if self.watch:
            self.watch.stop()
        if self.client:
            self.client.close()
        if self.private:
            self.private.stop(self.all_sandboxes)
        if not mounts_under(self.w):
            shutil.rmtree(self.w, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(prog="bench_cri.py")
    ap.add_argument("--qpod", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--parallel", type=int, default=0)
    ap.add_argument("--mem-pods", type=int, default=3)
    ap.add_argument("--spares", type=int, default=0)
    ap.add_argument("--handlers", default="")
    ap.add_argument("--cri-socket", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args()

    def on_term(sig, frame):
        raise Interrupted()

    signal.signal(signal.SIGTERM, on_term)
    out = {"partial": False, "error": None}
    b = None
    try:
        b = Bench(args)
        b.setup()
        b.run()
    except (Interrupted, KeyboardInterrupt):
        out["partial"], out["error"] = True, "interrupted"
    except BenchError as e:
        out["partial"], out["error"] = True, str(e)
    except Exception as e:  # a bug here: still one line, and the cleanup
        out["partial"], out["error"] = True, "%s: %s" % (type(e).__name__, e)
    finally:
        # a second Ctrl-C or SIGTERM must not cut the cleanup short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if b:
            b.cleanup()
            out.update(b.res.json())
            # partial: something was measured before it stopped
            out["partial"] = bool(out["error"]) and bool(b.res.rows)
            out["handlers"] = b.handlers
            out["endpoint"] = args.cri_socket or "private containerd"
            out["private"] = b.private is not None
        if args.progress:
            sys.stderr.write("\r\033[K")
        with open(args.out, "w") as f:
            json.dump(out, f)
    return 1 if out["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
