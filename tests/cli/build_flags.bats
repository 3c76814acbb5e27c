#!/usr/bin/env bats
# tests/cli/build_flags.bats — CFLAGS and LDFLAGS reach every binary the
# Makefile links (issue 15): qpod and its dynamic twin qpod-libvirt, a unit test, the in-pod test helper, a
# bench tool and guest-init (`make -n -B`: builds nothing); and that qpod is
# the static PIE configure chose (readelf of the built binaries).

bats_require_minimum_version 1.5.0
REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

@test "CFLAGS and LDFLAGS reach qpod, qpod-libvirt, the unit tests, the test helper, the bench tools and guest-init" {
	[ -f "$REPO/config.mk" ] || skip "not configured (make first)"
	local b=$BATS_TEST_TMPDIR/b t line
	run make -C "$REPO" -n B="$b" CFLAGS=-DQP_PROBE_CFLAGS LDFLAGS=-Wl,--qp-probe-ldflags \
		"$b/qpod" "$b/qpod-libvirt" "$b/tests/test_spec" "$b/tests/helper/qpod-testhelper" "$b/tools/bench/ctxsw" "$b/guest-init/qpod-init"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	for t in qpod qpod-libvirt tests/test_spec tests/helper/qpod-testhelper tools/bench/ctxsw guest-init/qpod-init; do
		line=$(grep -F -e "-o $b/$t " -e "-o $b/$t.tmp " <<<"$output" | head -1) # qpod links to .tmp, then splits its debug info off
		[ -n "$line" ] || { echo "no link line for $t"; return 1; }
		[[ $line == *-DQP_PROBE_CFLAGS* ]] || { echo "CFLAGS missing for $t: $line"; return 1; }
		[[ $line == *--qp-probe-ldflags* ]] || { echo "LDFLAGS missing for $t: $line"; return 1; }
	done
}

@test "qpod is a static PIE where configure chose it (no program interpreter), qpod-libvirt is dynamic" {
	local b=${QPOD_BUILD:-$REPO/build} static
	static=$(sed -n 's/^QPOD_STATIC = *//p' "$REPO/config.mk")
	[ -x "$b/qpod" ] && [ -x "$b/qpod-libvirt" ] || { echo "not built: $b/qpod, $b/qpod-libvirt"; return 1; }
	run readelf -lW "$b/qpod"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	if [ "$static" = -static-pie ]; then
		[[ $output != *"program interpreter"* ]] || { echo "qpod has a program interpreter"; return 1; }
		[[ $output == *"DYN ("* ]] || { echo "qpod is not position independent: $output"; return 1; }
	else
		[[ $output == *"program interpreter"* ]] || { echo "QPOD_STATIC is empty, but qpod has no interpreter"; return 1; }
	fi
	run readelf -lW "$b/qpod-libvirt"
	[[ $output == *"program interpreter"* ]] || { echo "qpod-libvirt has no program interpreter"; return 1; }
}
