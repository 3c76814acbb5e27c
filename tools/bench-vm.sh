#!/bin/bash
# tools/bench-vm.sh — microVM start against the baselines, side by side and
# interleaved in one run (the machine is noisy): per round, in turn,
#   qpod          qpod run --mode vm --rm ROOTFS -- /bin/true   (the default:
#                 boot auto, a clone of the template, qpod's firmware)
#   qpod-cold     the same, --boot cold: a kernel boot with qpod's firmware
#                 (qboot/)
#   qboot-cold    --boot cold --firmware qboot: Debian's qboot.rom
#   seabios-cold  --boot cold --firmware seabios: QEMU's microvm SeaBIOS
#                 (the three cold boots in a rotating order)
#   trad          QEMU -M pc + SeaBIOS + Debian's cloud kernel + the same
#                 guest-init and rootfs in the initramfs (build/tools/qpod-tradvm -n 1)
# Each is the run-to-exit wall time an outside timer sees; the cold boots'
# `--timeline` phases are reported as medians per firmware (qpod's own has
# vmm_init and firmware from its markers, the others vmm_firmware). Then
# the guest's used memory after boot and the VMM's RSS at 64M/256M/512M
# through `qpod stats`.
# Usage: tools/bench-vm.sh [RUNS]   (default 10). Accel: QPOD_ACCEL or auto.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-lib.sh
RUNS=${1:-10}
QPOD=build/qpod
ROOTFS=${QPOD_ROOTFS:-${QPOD_CACHE:-/var/cache/qpod}/rootfs-busybox}
ROOT=$(mktemp -d /tmp/qpod-bench.XXXXXX)
trap '"$QPOD" --root "$ROOT" list -q 2>/dev/null | xargs -r -n1 "$QPOD" --root "$ROOT" delete --force; rm -rf "$ROOT"' EXIT
tools/baseline-kernel.sh >/dev/null

# cold NAME [run options]: one cold boot, its wall time (us) on stdout, its
# timeline line appended to $ROOT/NAME.tl
cold() {
	local name=$1 s e
	shift
	s=$(now_us)
	"$QPOD" --root "$ROOT" run --mode vm --boot cold --timeline "$@" --rm "$ROOTFS" -- /bin/true 2>"$ROOT/err" >/dev/null ||
		{ cat "$ROOT/err" >&2; exit 1; }
	e=$(now_us)
	((i == 0)) || sed -n 's/^qpod-timeline: //p' "$ROOT/err" >>"$ROOT/$name.tl"
	echo $((e - s))
}

q=() qc=() qb=() s=() t=()
for ((i = 0; i <= RUNS; i++)); do
	a=$(time_us "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- /bin/true)
	# the three cold boots in a rotating order: none is always the one
	# right after the clone's teardown
	for ((k = 0; k < 3; k++)); do
		case $(((i + k) % 3)) in
		0) ac=$(cold qpod) ;;
		1) ab=$(cold qboot --firmware qboot) ;;
		2) b=$(cold seabios --firmware seabios) ;;
		esac
	done
	c=$(time_us build/tools/qpod-tradvm -n 1 -r "$ROOTFS")
	((i == 0)) && continue # warm-up round
	q+=("$a") qc+=("$ac") qb+=("$ab") s+=("$b") t+=("$c")
	printf '\r  round %d/%d' "$i" "$RUNS" >&2
done
echo >&2

host_line
echo "accel: ${QPOD_ACCEL:-auto}; $RUNS runs after 1 warm-up, interleaved; run-to-exit of /bin/true, ms"
printf '| %-52s | %8s | %8s | %8s | %8s |\n' "" min max avg median
row() { # LABEL US...
	local label=$1
	shift
	read -r min max avg med <<<"$(stats "$@")"
	printf '| %-52s | %8.1f | %8.1f | %8.1f | %8.1f |\n' "$label" "$min" "$max" "$avg" "$med"
}
row "qpod microvm, default (template clone)" "${q[@]}"
row "qpod microvm, cold boot, qpod's firmware (qboot/)" "${qc[@]}"
row "qpod microvm, cold boot, Debian's qboot.rom" "${qb[@]}"
row "qpod microvm, cold boot, SeaBIOS" "${s[@]}"
row "traditional VM (-M pc, SeaBIOS, cloud kernel)" "${t[@]}"
med() { stats "$@" | cut -d' ' -f4; }
awk -v a="$(med "${qc[@]}")" -v b="$(med "${qb[@]}")" -v c="$(med "${t[@]}")" -v d="$(med "${q[@]}")" 'BEGIN {
	printf "ratio of medians: cold qpod-firmware/traditional %.2fx, qpod-firmware/qboot.rom %.2fx, default/traditional %.2fx\n", a/c, a/b, d/c }'

echo "cold boot phases, medians per firmware, ms:"
for name in qpod qboot seabios; do
	jq -s -c --arg fw "$name" '[.[] | to_entries[]] | group_by(.key) |
		map({key: .[0].key, value: ([.[].value] | sort | if length % 2 == 1 then .[length / 2 | floor]
			else (.[length / 2 - 1] + .[length / 2]) / 2 end)}) | from_entries | {variant: $fw} + .' "$ROOT/$name.tl"
done

echo "memory after boot (idle sleep workload), kB:"
for mem in 64M 256M 512M; do
	id=mem-$mem
	"$QPOD" --root "$ROOT" run --mode vm --memory "$mem" --name "$id" -d "$ROOTFS" -- sleep 600 </dev/null >/dev/null 2>&1 ||
		{ echo "qpod: bench-vm: cannot start a $mem pod" >&2; exit 1; }
	sleep 2
	"$QPOD" --root "$ROOT" stats "$id" | jq -c --arg m "$mem" '{memory: $m, guest_used_kb: .guest.used_kb, guest_total_kb: .guest.total_kb, vmm_rss_kb: .vmm.rss_kb, vmm_pss_kb: .vmm.pss_kb, vmm_vsz_kb: .vmm.vsz_kb}'
	"$QPOD" --root "$ROOT" delete --force "$id"
done
