#!/bin/bash
# tools/bench-vm.sh — microVM start against the baselines, side by side and
# interleaved in one run (the machine is noisy): per round, in turn,
#   qpod      qpod run --mode vm --rm ROOTFS -- /bin/true   (microvm + qboot)
#   seabios   the same with --firmware seabios               ("without qboot")
#   trad      QEMU -M pc + SeaBIOS + Debian's cloud kernel + the same guest-init
#             and rootfs in the initramfs (build/tools/qpod-tradvm -n 1)
# Each is the run-to-exit wall time an outside timer sees. Then the guest's
# used memory after boot and the VMM's RSS at 64M/256M/512M through `qpod stats`.
# Usage: tools/bench-vm.sh [RUNS]   (default 10). Accel: QPOD_ACCEL or auto.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-lib.sh
RUNS=${1:-10}
QPOD=build/qpod
ROOTFS=${QPOD_ROOTFS:-/var/cache/qpod/rootfs-busybox}
ROOT=$(mktemp -d /tmp/qpod-bench.XXXXXX)
trap '"$QPOD" --root "$ROOT" list -q 2>/dev/null | xargs -r -n1 "$QPOD" --root "$ROOT" delete --force; rm -rf "$ROOT"' EXIT
tools/baseline-kernel.sh >/dev/null

q=() s=() t=()
for ((i = 0; i <= RUNS; i++)); do
	a=$(time_us "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- /bin/true)
	b=$(time_us "$QPOD" --root "$ROOT" run --mode vm --firmware seabios --rm "$ROOTFS" -- /bin/true)
	c=$(time_us build/tools/qpod-tradvm -n 1 -r "$ROOTFS")
	((i == 0)) && continue # warm-up round
	q+=("$a") s+=("$b") t+=("$c")
	printf '\r  round %d/%d' "$i" "$RUNS" >&2
done
echo >&2
read -r qmin qmax qavg qmed <<<"$(stats "${q[@]}")"
read -r smin smax savg smed <<<"$(stats "${s[@]}")"
read -r tmin tmax tavg tmed <<<"$(stats "${t[@]}")"

host_line
echo "accel: ${QPOD_ACCEL:-auto}; $RUNS runs after 1 warm-up, interleaved; run-to-exit of /bin/true, ms"
printf '| %-40s | %8s | %8s | %8s | %8s |\n' "" min max avg median
printf '| %-40s | %8.1f | %8.1f | %8.1f | %8.1f |\n' "qpod microvm + qboot" "$qmin" "$qmax" "$qavg" "$qmed"
printf '| %-40s | %8.1f | %8.1f | %8.1f | %8.1f |\n' "qpod microvm + SeaBIOS (without qboot)" "$smin" "$smax" "$savg" "$smed"
printf '| %-40s | %8.1f | %8.1f | %8.1f | %8.1f |\n' "traditional VM (-M pc, SeaBIOS, cloud kernel)" "$tmin" "$tmax" "$tavg" "$tmed"
awk -v a="$qmed" -v b="$smed" -v c="$tmed" 'BEGIN { printf "ratio of medians: qpod/traditional %.2fx, qpod/seabios %.2fx\n", a/c, a/b }'

echo "memory after boot (idle sleep workload), kB:"
for mem in 64M 256M 512M; do
	id=mem-$mem
	"$QPOD" --root "$ROOT" run --mode vm --memory "$mem" --name "$id" -d "$ROOTFS" -- sleep 600 </dev/null >/dev/null 2>&1 ||
		{ echo "qpod: bench-vm: cannot start a $mem pod" >&2; exit 1; }
	sleep 2
	"$QPOD" --root "$ROOT" stats "$id" | jq -c --arg m "$mem" '{memory: $m, guest_used_kb: .guest.used_kb, guest_total_kb: .guest.total_kb, vmm_rss_kb: .vmm.rss_kb, vmm_pss_kb: .vmm.pss_kb, vmm_vsz_kb: .vmm.vsz_kb}'
	"$QPOD" --root "$ROOT" delete --force "$id"
done
