#!/usr/bin/env bats
# tests/cli/vm.bats — `qpod run --mode vm --rm ROOTFS -- CMD`: a QEMU microVM
# boots, runs CMD from the 9p rootfs, relays its output and exit status, and
# leaves no QEMU behind (the common teardown checks processes).
#
# KVM: /dev/kvm may open and still not work (nested virtualisation), so the
# tests run under TCG unless QPOD_TEST_ACCEL=kvm (or auto: the probe) says so.

load helpers

KERNEL=${QPOD_KERNEL:-/var/cache/qpod/kernel/current/vmlinux}

setup() {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
	[ -f "$KERNEL" ] || skip "no guest kernel at $KERNEL (run kernel-config/build.sh)"
	setup_common
	export QPOD_KERNEL=$KERNEL
	case ${QPOD_TEST_ACCEL:-tcg} in
	auto) unset QPOD_ACCEL ;;
	*) export QPOD_ACCEL=${QPOD_TEST_ACCEL:-tcg} ;;
	esac
}

@test "vm: output and exit status of the workload" {
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- \
		sh -c 'echo hi; echo oops >&2; exit 3'
	assert_status 3
	assert_eq "$output" "hi" "stdout"
	assert_eq "$stderr" "oops" "stderr"
	assert_eq "$(qp list --quiet)" "" "pods left in list"
}

@test "vm: a command missing in the rootfs exits 127" {
	run -127 --separate-stderr timeout 20 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- \
		/no/such/command
	assert_qpod_error 127
	assert_contains "$stderr" "/no/such/command"
}

@test "vm: true exits 0 with no output" {
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- true
	assert_status 0
	assert_eq "$output" "" "stdout"
}
