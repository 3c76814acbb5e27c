#!/usr/bin/env bash
# tools/bench-net.sh — what networking adds to a container start:
# `qpod run --rm --net bridge ROOTFS -- /bin/true` against `--net none`,
# interleaved in one run.  Runs qpod inside a network namespace this script
# creates (and deletes), so the bridge and veths never touch the host's
# interfaces.  Usage: tools/bench-net.sh [RUNS] (default 20, after 3 warm-up).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-lib.sh

RUNS=${1:-20}
WARMUP=3
QPOD=${QPOD:-$PWD/build/qpod}
ROOTFS=${QPOD_CACHE:-/var/cache/qpod}/rootfs-busybox
NS=qpod-bench-$$
work=$(mktemp -d /tmp/qpod-bench-net.XXXXXX)

tools/mkrootfs.sh "$ROOTFS" >&2
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
ip netns add "$NS"
ip -n "$NS" link set lo up
inns() { nsenter --net="/run/netns/$NS" "$@"; }

declare -a T_NONE T_BRIDGE
for ((i = 0; i < WARMUP + RUNS; i++)); do
	printf '\rrun %d/%d' "$((i + 1))" "$((WARMUP + RUNS))" >&2
	a=$(time_us inns "$QPOD" --root "$work/state" run --rm --net none "$ROOTFS" -- /bin/true)
	b=$(time_us inns "$QPOD" --root "$work/state" run --rm --net bridge "$ROOTFS" -- /bin/true)
	if ((i >= WARMUP)); then T_NONE+=("$a"); T_BRIDGE+=("$b"); fi
done
echo >&2

host_line
echo "runs: $RUNS (after $WARMUP warm-up), interleaved; wall time of the whole command"
echo
echo "| network | min ms | max ms | avg ms | median ms |"
echo "|---|---|---|---|---|"
read -r mn mx av m0 <<<"$(stats "${T_NONE[@]}")"
echo "| --net none (loopback only) | $mn | $mx | $av | $m0 |"
read -r mn mx av m1 <<<"$(stats "${T_BRIDGE[@]}")"
echo "| --net bridge (veth on qpod0, address, route) | $mn | $mx | $av | $m1 |"
echo
awk -v a="$m0" -v b="$m1" 'BEGIN {
	printf "network phase (difference of medians): %.2f ms = %.1f%% of the bridged start\n", b-a, (b-a)*100/b }'
