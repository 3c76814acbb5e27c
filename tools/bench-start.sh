#!/usr/bin/env bash
# tools/bench-start.sh — container start, side by side: `qpod run` vs
# `runc run` of the same OCI bundle (busybox rootfs, /bin/true), interleaved
# in one run because this kind of machine is noisy.  Prints min/max/avg/median
# wall time in ms and the ratio of medians.  Usage: tools/bench-start.sh [RUNS]
# (default 20, after 3 warm-up runs of each).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-lib.sh

RUNS=${1:-20}
WARMUP=3
QPOD=${QPOD:-$PWD/build/qpod}
CACHE=${QPOD_CACHE:-/var/cache/qpod}
ROOTFS=$CACHE/rootfs-busybox
RUNC=$(command -v runc || true)

tools/mkrootfs.sh "$ROOTFS" >&2
work=$(mktemp -d /tmp/qpod-bench.XXXXXX)
root=$work/state
runc_root=$work/runc-state
cleanup() {
	"$QPOD" --root "$root" delete --force bq >/dev/null 2>&1 || true
	[ -n "$RUNC" ] && "$RUNC" --root "$runc_root" delete --force br >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkdir -p "$work/bundle"
"$QPOD" spec | jq --arg r "$ROOTFS" '.root.path = $r | .process.args = ["/bin/true"]' \
	>"$work/bundle/config.json"

declare -a T_QPOD T_QPOD_FRIENDLY T_RUNC

for ((i = 0; i < WARMUP + RUNS; i++)); do
	printf '\rrun %d/%d' "$((i + 1))" "$((WARMUP + RUNS))" >&2
	a=$(time_us "$QPOD" --root "$root" run bq --bundle "$work/bundle")
	b=$(time_us "$QPOD" --root "$root" run --rm --name bqf "$ROOTFS" -- /bin/true)
	if [ -n "$RUNC" ]; then
		c=$(time_us "$RUNC" --root "$runc_root" run --bundle "$work/bundle" br)
	fi
	if ((i >= WARMUP)); then
		T_QPOD+=("$a"); T_QPOD_FRIENDLY+=("$b"); [ -n "$RUNC" ] && T_RUNC+=("$c")
	fi
done
echo >&2

host_line
echo "runs: $RUNS (after $WARMUP warm-up), interleaved; wall time of the whole command"
echo
echo "| runtime | min ms | max ms | avg ms | median ms |"
echo "|---|---|---|---|---|"
read -r mn mx av mq <<<"$(stats "${T_QPOD[@]}")"
echo "| qpod run ID --bundle | $mn | $mx | $av | $mq |"
read -r mn mx av mf <<<"$(stats "${T_QPOD_FRIENDLY[@]}")"
echo "| qpod run --rm ROOTFS -- /bin/true | $mn | $mx | $av | $mf |"
if [ -n "$RUNC" ]; then
	read -r mn mx av mr <<<"$(stats "${T_RUNC[@]}")"
	echo "| runc run --bundle ($($RUNC --version | head -1)) | $mn | $mx | $av | $mr |"
	echo
	awk -v q="$mq" -v f="$mf" -v r="$mr" 'BEGIN {
		printf "ratio of medians: qpod/runc = %.3f, qpod friendly/runc = %.3f\n", q/r, f/r }'
fi
