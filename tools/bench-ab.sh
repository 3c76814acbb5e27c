#!/usr/bin/env bash
# tools/bench-ab.sh — two qpod builds side by side: A (e.g. the commit
# before a change) and B (after), interleaved in one run because this kind
# of machine is noisy.  Per round, in turn: a container pod and a VM pod of
# each build (`run --rm ROOTFS -- /bin/true`, wall time of the whole
# command).  Prints the medians and the ratio B/A per mode, and which accel
# the VM pods ran with.
# Usage: tools/bench-ab.sh A_QPOD B_QPOD [RUNS]   (default 10, after 2 warm-up
# rounds).  Each build finds its own guest-init next to it.  VM_ARGS_A and
# VM_ARGS_B: more `run` options for each build's VM pods (e.g. VM_ARGS_B=
# "--boot cold" to compare cold boots across a change; A and B may then be
# the same binary).  VM_ENV_A and VM_ENV_B: environment settings for each
# build's VM pods (e.g. VM_ENV_A=QPOD_VM_JAIL=off: the jail's cost).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-lib.sh

A=${1:?usage: tools/bench-ab.sh A_QPOD B_QPOD [RUNS]}
B=${2:?usage: tools/bench-ab.sh A_QPOD B_QPOD [RUNS]}
RUNS=${3:-10}
WARMUP=2
CACHE=${QPOD_CACHE:-/var/cache/qpod}
ROOTFS=$CACHE/rootfs-busybox

tools/mkrootfs.sh "$ROOTFS" >&2
work=$(mktemp -d /tmp/qpod-bench-ab.XXXXXX)
trap '"$B" --root "$work/b" delete --force ab-accel >/dev/null 2>&1; rm -rf "$work"' EXIT INT TERM

declare -a CA CB VA VB
for ((i = 0; i < WARMUP + RUNS; i++)); do
	printf '\rround %d/%d' "$((i + 1))" "$((WARMUP + RUNS))" >&2
	ca=$(time_us "$A" --root "$work/a" run --rm "$ROOTFS" -- /bin/true)
	cb=$(time_us "$B" --root "$work/b" run --rm "$ROOTFS" -- /bin/true)
	# shellcheck disable=SC2086 # the extra options are words
	va=$(time_us env ${VM_ENV_A:-} "$A" --root "$work/a" run --mode vm ${VM_ARGS_A:-} --rm "$ROOTFS" -- /bin/true)
	# shellcheck disable=SC2086
	vb=$(time_us env ${VM_ENV_B:-} "$B" --root "$work/b" run --mode vm ${VM_ARGS_B:-} --rm "$ROOTFS" -- /bin/true)
	if ((i >= WARMUP)); then
		CA+=("$ca"); CB+=("$cb"); VA+=("$va"); VB+=("$vb")
	fi
done
echo >&2
"$B" --root "$work/b" run -d --mode vm --name ab-accel "$ROOTFS" -- sleep 60 >/dev/null
accel=$("$B" --root "$work/b" state ab-accel | jq -r .accel)
"$B" --root "$work/b" delete --force ab-accel

host_line
echo "runs: $RUNS (after $WARMUP warm-up rounds), interleaved; vm accel: ${accel:-auto}"
echo "A: ${VM_ENV_A:-} $A ${VM_ARGS_A:-}"
echo "B: ${VM_ENV_B:-} $B ${VM_ARGS_B:-}"
echo
echo "| mode | A median ms | B median ms | B/A |"
echo "|---|---|---|---|"
read -r _ _ _ mca <<<"$(stats "${CA[@]}")"
read -r _ _ _ mcb <<<"$(stats "${CB[@]}")"
read -r _ _ _ mva <<<"$(stats "${VA[@]}")"
read -r _ _ _ mvb <<<"$(stats "${VB[@]}")"
echo "| container | $mca | $mcb | $(awk -v a="$mca" -v b="$mcb" 'BEGIN { printf "%.2f", b / a }') |"
echo "| vm | $mva | $mvb | $(awk -v a="$mva" -v b="$mvb" 'BEGIN { printf "%.2f", b / a }') |"
