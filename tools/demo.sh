#!/usr/bin/env bash
# tools/demo.sh — `make demo`: container pods end to end, each step printed
# before it runs.  Builds (or reuses) the busybox rootfs, then:
#   qpod spec -> a bundle; create / start / state / list / ps / exec / kill /
#   delete; the friendly `qpod run --rm ROOTFS -- ...` with limits; exit
#   status propagation; a memory limit enforced by the OOM killer.
# Uses a private state root under /tmp and removes everything on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

QPOD=${QPOD:-$PWD/build/qpod}
CACHE=${QPOD_CACHE:-/var/cache/qpod}
ROOTFS=$CACHE/rootfs-busybox
HELPER=/bin/qpod-testhelper
ID=demo-$$

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
step "$QPOD" --root "$STATE" kill "$ID" TERM
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

printf '\n%sdemo done.%s\n' "$bold" "$norm"
