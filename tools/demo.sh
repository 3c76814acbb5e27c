#!/usr/bin/env bash
# tools/demo.sh — `make demo`: the main job in a few minutes, each step
# printed before it runs.  Builds (or reuses) the busybox rootfs and the
# guest kernel, then:
#   container pods: qpod spec -> a bundle; create / start / state / list / ps
#   / exec / kill / delete; the friendly `qpod run --rm ROOTFS -- ...` with
#   limits; exit statuses; the OOM killer; --pids; seccomp;
#   the start timelines of a container pod and a VM pod (and which
#   accelerator ran: KVM, or TCG where KVM is not usable);
#   spares (clones started ahead): fill, list, a pod that takes one;
#   a VM pod that stays: qpod stats, a warm replace with its gap;
#   qpod density --max 3 in both modes, with the peers (--baseline); qpod bench start with its baselines
#   (runc; SeaBIOS and the traditional VM);
#   the HTML report of those results, written to a path it prints (kept).
# Uses a private state root under /tmp and removes it on exit.
# QPOD_DEMO_OUT: where the results and report go (default /tmp/qpod-demo-out).
set -euo pipefail
cd "$(dirname "$0")/.."

QPOD=${QPOD:-$PWD/build/qpod}
CACHE=${QPOD_CACHE:-/var/cache/qpod}
ROOTFS=$CACHE/rootfs-busybox
HELPER=/bin/qpod-testhelper
ID=demo-$$
VMID=demo-vm-$$
OUT=${QPOD_DEMO_OUT:-/tmp/qpod-demo-out}

if [ "$(id -u)" != 0 ]; then
	echo "qpod: demo: container pods need root (run: sudo make demo)" >&2
	exit 1
fi
[ -x "$QPOD" ] || { echo "qpod: demo: $QPOD not built (run: make)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/qpod-demo.XXXXXX)
STATE=$WORK/state
BUNDLE=$WORK/bundle
cleanup() {
	"$QPOD" --root "$STATE" delete --force "$ID" >/dev/null 2>&1 || true
	"$QPOD" --root "$STATE" delete --force "$VMID" >/dev/null 2>&1 || true
	"$QPOD" --root "$STATE" spares drain >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bold=$(tput bold 2>/dev/null || true)
dim=$(tput dim 2>/dev/null || true)
norm=$(tput sgr0 2>/dev/null || true)

section() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$norm"; }
# show TEXT: print a command line, with $QPOD shortened to qpod
show() {
	local shown="$*"
	shown=${shown//"$QPOD --root $STATE"/qpod}
	shown=${shown//"$QPOD"/qpod}
	printf '%s$ %s%s\n' "$dim" "$shown" "$norm"
}
# step CMD...: show the command, then run it
step() {
	show "$@"
	"$@"
}
# step_status CMD...: like step, and print the exit status (which may be non-zero)
step_status() {
	local rc=0
	step "$@" || rc=$?
	printf '%s(exit status %d)%s\n' "$dim" "$rc" "$norm"
}
qp() { "$QPOD" --root "$STATE" "$@"; }

section "the test rootfs: busybox + the test helper (cached in $CACHE)"
step tools/mkrootfs.sh "$ROOTFS"

section "an OCI bundle from 'qpod spec'"
mkdir -p "$BUNDLE"
show "$QPOD spec > bundle/config.default.json"
"$QPOD" spec >"$BUNDLE/config.default.json"
jq --arg r "$ROOTFS" '.root.path = $r | .hostname = "demo"
	| .process.args = ["sh", "-c", "echo hello from $(hostname), pid $$; exec sleep 300"]' \
	"$BUNDLE/config.default.json" >"$BUNDLE/config.json"
echo "config.json: root.path=$ROOTFS, hostname=demo, args: sh -c 'echo hello...; exec sleep 300'"
step jq -c '{ociVersion, process: {args: .process.args, cwd: .process.cwd}, hostname}' "$BUNDLE/config.json"

section "the OCI lifecycle: create, start, state, list, ps, exec, kill, delete"
step "$QPOD" --root "$STATE" create "$ID" --bundle "$BUNDLE" --pid-file "$WORK/pid"
echo "pid file: $(cat "$WORK/pid")"
step "$QPOD" --root "$STATE" state "$ID"
step "$QPOD" --root "$STATE" start "$ID"
sleep 0.2 # let the workload print its greeting
step "$QPOD" --root "$STATE" list
step "$QPOD" --root "$STATE" ps "$ID"
step "$QPOD" --root "$STATE" exec "$ID" -- sh -c 'echo "inside: hostname $(hostname), $(ls /proc | grep -c "^[0-9]") processes"'
# the workload is PID 1 without a TERM handler: as under runc, TERM does not
# kill it; KILL does
step "$QPOD" --root "$STATE" kill "$ID" KILL
for _ in $(seq 50); do
	[ "$(qp state "$ID" | jq -r .status)" = stopped ] && break
	sleep 0.1
done
step "$QPOD" --root "$STATE" state "$ID"
step "$QPOD" --root "$STATE" delete "$ID"
step "$QPOD" --root "$STATE" list

section "the friendly form: qpod run --rm ROOTFS -- CMD, with limits"
step "$QPOD" --root "$STATE" run --rm --memory 64M --cpus 0.5 --pids 50 --hostname friendly \
	"$ROOTFS" -- sh -c 'echo "hello from $(hostname)"; cat /proc/self/status | grep -E "^(NoNewPrivs|CapEff)"'
step "$QPOD" --root "$STATE" run --rm -e GREETING=hi -w /tmp --user 65534:65534 \
	"$ROOTFS" -- sh -c 'echo "$GREETING from $(pwd) as $(id -u):$(id -g)"'

section "exit status propagation (the workload's status; 128+N when killed by signal N)"
step_status "$QPOD" --root "$STATE" run --rm "$ROOTFS" -- sh -c 'exit 3'
step_status "$QPOD" --root "$STATE" run --rm "$ROOTFS" -- sh -c 'kill -KILL $$'
step_status "$QPOD" --root "$STATE" run --rm "$ROOTFS" -- /bin/no-such-command

section "a memory limit the OOM killer enforces: 200 MiB asked, 32M allowed"
step_status "$QPOD" --root "$STATE" run --rm --memory 32M "$ROOTFS" -- "$HELPER" alloc 200
step_status "$QPOD" --root "$STATE" run --rm --memory 32M "$ROOTFS" -- "$HELPER" alloc 8

section "a fork bomb under --pids 20"
step "$QPOD" --root "$STATE" run --rm --pids 20 "$ROOTFS" -- "$HELPER" forkbomb 1000

section "seccomp: the default profile"
step "$QPOD" --root "$STATE" run --rm "$ROOTFS" -- "$HELPER" syscall keyctl mount bpf kexec_load getpid

# timeline CMD...: show and run a `qpod run --timeline` command, then its
# start's phases as one readable line
timeline() {
	local err=$WORK/timeline.err rc=0
	show "$@"
	"$@" 2>"$err" || rc=$?
	grep -v '^qpod-timeline: ' "$err" >&2 || true
	sed -n 's/^qpod-timeline: //p' "$err" | jq -r '. as $t
		| ($t | to_entries | map(select(.key != "start_total") | "\(.key) \(.value | round) ms")
		| join(", ")) as $p | "start timeline: \($p); total \($t.start_total | round) ms"'
	return "$rc"
}

section "the guest kernel of VM pods (built once, cached in $CACHE/kernel)"
step kernel-config/build.sh

section "start timelines: a container pod, then a VM pod booting its own kernel (--boot cold)"
timeline "$QPOD" --root "$STATE" run --rm --timeline "$ROOTFS" -- echo "hello from a container pod"
timeline "$QPOD" --root "$STATE" run --rm --timeline --mode vm --boot cold "$ROOTFS" -- echo "hello from a VM pod"

# ---- VM templates (docs/TEMPLATES.md) ----------------------------------------
section "VM templates: a guest booted once and saved; pods start as its copy-on-write clones"
step "$QPOD" template create
step "$QPOD" template list
timeline "$QPOD" --root "$STATE" run --rm --timeline --mode vm --boot template "$ROOTFS" -- echo "hello from a clone"
timeline "$QPOD" --root "$STATE" run --rm --timeline --mode vm "$ROOTFS" -- sh -c 'echo "the default (boot auto) clones too: $(hostname), $(date)"'

section "spares: clones started ahead, unique and warm; a pod takes one instead of starting a VM"
step "$QPOD" --root "$STATE" spares fill --count 1 --no-refill
step "$QPOD" --root "$STATE" spares list
timeline "$QPOD" --root "$STATE" run --rm --timeline --mode vm "$ROOTFS" -- echo "hello from a spare"
step "$QPOD" --root "$STATE" spares list

section "a VM pod that stays: its accelerator, memory, and a warm replace"
step "$QPOD" --root "$STATE" run -d --name "$VMID" --mode vm "$ROOTFS" -- sleep 600
ACCEL=$(qp state "$VMID" | jq -r .accel)
step "$QPOD" --root "$STATE" state "$VMID"
if [ "$ACCEL" = kvm ]; then
	echo "${bold}accel: kvm${norm} (hardware virtualisation)"
else
	echo "${bold}accel: $ACCEL${norm}: KVM is not usable on this host (no /dev/kvm, or a probe boot"
	echo "under it failed), so QEMU emulates the CPU: every VM figure below is TCG's."
fi
step "$QPOD" --root "$STATE" stats "$VMID"
echo "a warm replace: a new workload in the same VM (gap_ms: the time neither ran)"
step "$QPOD" --root "$STATE" replace "$VMID" -- sleep 600
step "$QPOD" --root "$STATE" delete --force "$VMID"

mkdir -p "$OUT"
section "density: start idle pods until --max 3, in both modes, then as many under runc, crun and runsc (results in $OUT)"
step "$QPOD" --root "$STATE" density --mode container --max 3 --memory 64M --baseline --image "$ROOTFS" \
	--format json --output "$OUT/density-container.json"
step "$QPOD" report "$OUT/density-container.json"
step "$QPOD" --root "$STATE" density --mode vm --max 3 --memory 256M --baseline --image "$ROOTFS" \
	--format json --output "$OUT/density-vm.json"
step "$QPOD" report "$OUT/density-vm.json"

section "bench start with its baselines: runc, crun and gVisor's runsc for containers (a row with its reason where one refuses this host); SeaBIOS and a traditional VM for VM pods"
step tools/baseline-kernel.sh
step "$QPOD" bench start --mode both --runs 3 --baseline --memory 256M --image "$ROOTFS" \
	--format json --output "$OUT/start.json"
step "$QPOD" report "$OUT/start.json"

section "the HTML report of those results"
step "$QPOD" report --format html --output "$OUT/report.html" \
	"$OUT/start.json" "$OUT/density-container.json" "$OUT/density-vm.json"
echo "${bold}report: $OUT/report.html${norm} (open it in a browser; the JSON results are beside it)"

printf '\n%sdemo done (VM pods ran under %s).%s\n' "$bold" "$ACCEL" "$norm"
