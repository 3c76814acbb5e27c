#!/usr/bin/env bats
# tests/cli/build_flags.bats — CFLAGS and LDFLAGS reach every binary the
# Makefile links (issue 15): qpod and its dynamic twin qpod-libvirt, a unit test, the in-pod test helper, a
# bench tool and guest-init.  Reads `make -n -B` only; builds nothing.

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
