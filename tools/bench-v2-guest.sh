#!/bin/bash
# tools/bench-v2-guest.sh — `qpod bench start --mode container --baseline`
# on a pure cgroup v2 system, so crun (which refuses this hybrid host) is
# measured beside qpod and runc.  It boots the microVM that
# tests/cli/cgroup_v2.bats boots (guest-init mounts only cgroup2, every
# controller enabled), whose guest runs qpod and the peers from the host's
# /usr and build dir, shared read-only; the result comes back through a
# writable share, with params saying where it ran.  Under TCG (no usable
# KVM) every instruction of the guest is emulated: absolute times are many
# times the host's, and only the ratios of one run compare.
#
#   tools/bench-v2-guest.sh [--runs N] [--memory SIZE] [--output FILE]
#                           [--script FILE [--keep DIR]]
#     --runs N       measured runs (default 10; one warm-up first)
#     --memory SIZE  the guest's memory (default 1G: runsc's sandbox needs room)
#     --output FILE  the result (JSON; default bench-v2-guest.json), and the
#                    guest's output in FILE.log
#     --script FILE  run the bash script FILE in the guest instead of the
#                    bench (a probe: its output is FILE.log of --output; it
#                    finds qpod at $QPOD, a private rootfs copy at $ROOTFS)
#     --keep DIR     copy what the probe wrote into /out (the guest's writable
#                    share) to DIR, which must not exist yet
# QPOD_TCG_TB_SIZE: TCG's translation cache for this guest (default 512 MiB).
# Needs root, the build (make), the guest kernel and busybox rootfs in
# /var/cache/qpod (make kernel, or make check); QPOD_ACCEL as for qpod.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
runs=10 memory=1G output=bench-v2-guest.json script= keep=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--output) output=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h | --help) sed -n '2,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "qpod: bench-v2-guest: unknown argument \"$1\" (see --help)" >&2; exit 2 ;;
	esac
done
if [ -n "$keep" ] && { [ -z "$script" ] || [ -e "$keep" ]; }; then
	echo "qpod: bench-v2-guest: --keep needs --script and a DIR that does not exist yet" >&2
	exit 2
fi
case $runs in '' | *[!0-9]*) echo "qpod: bench-v2-guest: --runs must be a number, not \"$runs\"" >&2; exit 2 ;; esac
case $memory in
[1-9]*G) bytes=$((${memory%G} << 30)) ;;
[1-9]*M) bytes=$((${memory%M} << 20)) ;;
*) echo "qpod: bench-v2-guest: --memory must be NM or NG, not \"$memory\"" >&2; exit 2 ;;
esac
cache=${QPOD_CACHE:-/var/cache/qpod}
qpod=${QPOD:-$here/build/qpod}
build=$(dirname "$qpod")
kernel=${QPOD_KERNEL:-$cache/kernel/current/vmlinux}
rootfs=${QPOD_ROOTFS:-$cache/rootfs-busybox}
for f in "$qpod" "$kernel" "$rootfs" ${script:+"$script"}; do
	[ -e "$f" ] || { echo "qpod: bench-v2-guest: $f is missing (make; make kernel or make check)" >&2; exit 1; }
done
export QPOD_KERNEL=$kernel
# TCG's translation cache: qpod's 32 MiB default (a small pod's hot code)
# fills within a few runs of this guest's workload, and every flush makes
# the next runs translate the guest kernel's hot code again: run-to-exit
# spread 113-363 ms with 32 MiB, 136-219 ms with 512 (docs/BENCHMARKS.md)
export QPOD_TCG_TB_SIZE=${QPOD_TCG_TB_SIZE:-512}

V=$(mktemp -d /tmp/qpod-bench-v2.XXXXXX)
id=bench-v2-$$
cleanup() {
	[ -z "$keep" ] || cp -a "$V/out" "$keep" || true
	"$qpod" --root "$V/state" delete --force "$id" >/dev/null 2>&1 || true
	rm -rf "$V"
}
trap cleanup EXIT
# the VM's root: mount points and the usr-merged links into /usr
mkdir -p "$V/rootfs"/{usr,qpod,busybox,etc,out,proc,sys,dev,tmp,root} "$V/state" "$V/out"
for d in bin sbin lib lib64; do ln -s "usr/$d" "$V/rootfs/$d"; done
cat >"$V/out/guest.sh" <<EOF
#!/bin/bash
# runs as the guest's workload: the bench on a private copy of the rootfs
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
cp -a /busybox /tmp/rootfs || exit 1
EOF
if [ -n "$script" ]; then
	cp "$script" "$V/out/probe.sh"
	echo 'QPOD=/qpod/qpod ROOTFS=/tmp/rootfs exec bash /out/probe.sh' >>"$V/out/guest.sh"
else
	cat >>"$V/out/guest.sh" <<EOF
/qpod/qpod bench start --mode container --baseline --runs $runs --warmup 1 \\
	--image /tmp/rootfs --format json --output /out/start.json
EOF
fi
"$qpod" spec | jq --arg root "$V/rootfs" --arg build "$build" --arg busybox "$rootfs" \
	--arg out "$V/out" --argjson bytes "$bytes" '
	def bind($src; $dst; $opts): {destination: $dst, type: "bind", source: $src, options: $opts};
	.root.path = $root
	| .annotations["qpod.mode"] = "vm"
	| .process.terminal = false
	| .process.args = ["/usr/bin/bash", "/out/guest.sh"]
	| .linux.resources = {memory: {limit: $bytes}}
	| .mounts = [bind("/usr"; "/usr"; ["rbind", "ro"]), bind($build; "/qpod"; ["rbind", "ro"]),
		     bind($busybox; "/busybox"; ["rbind", "ro"]), bind("/etc"; "/etc"; ["rbind", "ro"]),
		     bind($out; "/out"; ["rbind", "rw"])]' >"$V/config.json"
echo "==> booting the cgroup v2 guest (--runs $runs; under TCG this takes minutes)" >&2
rc=0
timeout 3600 "$qpod" --root "$V/state" run "$id" --bundle "$V" </dev/null >"$V/guest.out" 2>"$V/guest.err" || rc=$?
# the guest's own output (the bench's errors, if any) beside the result
cat "$V/guest.out" "$V/guest.err" >"$output.log" 2>/dev/null || true
if [ -n "$script" ]; then
	echo "==> $output.log (the probe's output; status $rc)" >&2
	exit "$rc"
fi
if [ "$rc" != 0 ]; then
	echo "qpod: bench-v2-guest: the guest exited with status $rc ($output.log):" >&2
	tail -3 "$output.log" >&2
fi
if [ ! -s "$V/out/start.json" ]; then
	echo "qpod: bench-v2-guest: the guest wrote no result (status $rc):" >&2
	tail -5 "$V/guest.err" "$V/guest.out" >&2
	exit 1
fi
# where it ran: without a writable /dev/kvm the guest is emulated (TCG)
accel=${QPOD_ACCEL:-$([ -w /dev/kvm ] && echo "auto (KVM if its probe boot works)" || echo tcg)}
jq --arg accel "$accel" --arg tb "$QPOD_TCG_TB_SIZE" --arg hk "$(uname -r)" --arg mem "$memory" '
	.params.where = "a cgroup v2 microVM (tools/bench-v2-guest.sh), guest memory \($mem), accel \($accel) (translation cache \($tb) MiB), host kernel \($hk)"
	| .params.note = "under TCG every guest instruction is emulated: absolute times are many times the host'"'"'s; compare the ratios of this run only"' \
	"$V/out/start.json" >"$output"
echo "==> $output" >&2
