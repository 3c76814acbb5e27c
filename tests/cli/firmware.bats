#!/usr/bin/env bats
# tests/cli/firmware.bats — qpod's own firmware (qboot/, issue 12) under
# TCG: a pod boots it with both kernel formats (the vmlinux by its PVH
# entry, the bzImage by Linux's 32-bit boot protocol), its markers give the
# timeline vmm_init and firmware, a bare QEMU boots both formats without an
# initrd (a pod always has one: guest-init), and a corrupt fw_cfg answer
# (the test hook QPOD_TEST_FWCFG_CORRUPT, qboot/qpod_abi.h) ends the start
# at once with the firmware's own error line, not a hang.

load helpers

FIRMWARE=$QPOD_BUILD/qboot/qpod-firmware.bin
KERNEL_DIR=$(dirname "$VM_KERNEL")

setup() {
	need_vm
	[ -f "$FIRMWARE" ] || flunk "no firmware at $FIRMWARE (make)"
	setup_common
	vm_env
}

teardown() {
	if [ -n "${QEMU_PID:-}" ]; then kill "$QEMU_PID" 2>/dev/null || true; fi
	teardown_common
}

# a pod's timeline (its qpod-timeline line) from stderr text
timeline_of() {
	sed -n 's/^qpod-timeline: //p' <<<"$1"
}

boot_pod() { # KERNEL: a cold boot of qpod's firmware with it, a workload's output
	run --separate-stderr env QPOD_KERNEL="$1" "$QPOD" --root "$ROOT" run --mode vm --boot cold --timeline --rm \
		"$ROOTFS" -- sh -c 'echo booted; cat /proc/cmdline'
	assert_status 0
	assert_eq "${lines[0]}" booted "workload output"
	assert_contains "${lines[1]}" "console=ttyS0" "the kernel got qpod's command line"
	local tl
	tl=$(timeline_of "$stderr")
	jq -e '.vmm_init > 0 and .firmware >= 0 and .kernel > 0 and .init >= 0 and .workload > 0 and
		(has("vmm_firmware") | not)' <<<"$tl" >/dev/null || flunk "timeline without the firmware's phases: $tl"
}

@test "qpod firmware: the default; a vmlinux boots by PVH, its markers time vmm_init and firmware" {
	boot_pod "$VM_KERNEL"
}

@test "qpod firmware: a bzImage boots by the 32-bit boot protocol" {
	[ -f "$KERNEL_DIR/bzImage" ] || skip "the kernel build has no bzImage"
	boot_pod "$KERNEL_DIR/bzImage"
}

@test "qpod firmware: --firmware qpod explicitly; other firmwares get no marker phases" {
	run --separate-stderr qp run --mode vm --boot cold --firmware qpod --rm "$ROOTFS" -- echo ok
	assert_status 0
	assert_eq "$output" ok
	run --separate-stderr qp run --mode vm --boot cold --firmware qboot --timeline --rm "$ROOTFS" -- echo ok
	assert_status 0
	jq -e '.vmm_firmware > 0 and .kernel > 0 and (has("vmm_init") | not) and (has("firmware") | not)' \
		<<<"$(timeline_of "$stderr")" >/dev/null || flunk "qboot.rom's timeline: $stderr"
	run --separate-stderr qp run --mode vm --firmware qpood --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "qpod, qboot, seabios or an absolute path"
}

# QEMU with the firmware and KERNEL, no initrd: the kernel starts (its
# command line printed) and stops at the missing root; the markers R, J.
bare_boot() {
	local kernel=$1 out=$TEST_DIR/console.$2 marks=$TEST_DIR/marks.$2
	: >"$marks"
	qemu-system-x86_64 -M microvm,acpi=off -nodefaults -no-user-config -nographic -no-reboot -accel tcg \
		-m 128M -bios "$FIRMWARE" -kernel "$kernel" -append "console=ttyS0 panic=-1 qpod_fw_test=$2" \
		-serial "file:$out" -chardev "file,id=m,path=$marks" -device isa-debugcon,iobase=0x402,chardev=m \
		</dev/null >"$TEST_DIR/qemu.$2.log" 2>&1 &
	QEMU_PID=$!
	wait_for 600 grep -q "Unable to mount root" "$out"
	kill "$QEMU_PID" 2>/dev/null || true
	wait "$QEMU_PID" 2>/dev/null || true
	QEMU_PID=
	grep -q "Command line: console=ttyS0 panic=-1 qpod_fw_test=$2" "$out" || flunk "$2: no command line"
	grep -q "BIOS-e820: .*usable" "$out" || flunk "$2: no e820 map"
	assert_eq "$(cat "$marks")" RJ "$2: the firmware's markers"
}

@test "qpod firmware: a bare QEMU boots a vmlinux and a bzImage without an initrd" {
	bare_boot "$VM_KERNEL" vmlinux
	[ -f "$KERNEL_DIR/bzImage" ] || skip "the kernel build has no bzImage"
	bare_boot "$KERNEL_DIR/bzImage" bzImage
}

# QPOD_TEST_FWCFG_CORRUPT=WHAT: the firmware's own error, one line, and
# neither the hello timeout (set far beyond the test's) nor a pod left
corrupt_run() { # WHAT KERNEL EXPECTED-TEXT
	run --separate-stderr env QPOD_TEST_FWCFG_CORRUPT="$1" QPOD_KERNEL="$2" QPOD_VM_HELLO_TIMEOUT_MS=3600000 \
		"$QPOD" --root "$ROOT" run --mode vm --boot cold --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "the firmware stopped the VM: $3"
	assert_eq "$(qp list --format json | jq length)" 0 "no pod left"
}

@test "qpod firmware: a corrupt fw_cfg answer is a clear error from the host, not a hang" {
	corrupt_run e820 "$VM_KERNEL" "fw_cfg: etc/e820 has 19 bytes, not a whole number of 20-byte entries"
	corrupt_run cmdline "$VM_KERNEL" "fw_cfg: a command line of 4294967295 bytes"
	corrupt_run kernel "$VM_KERNEL" "fw_cfg: the PVH entry (1 bytes at 0xffffffff) is not in RAM"
	corrupt_run bogus "$VM_KERNEL" 'fw_cfg: opt/org.qpod/test-corrupt names no answer to corrupt: "bogus"'
	[ -f "$KERNEL_DIR/bzImage" ] || skip "the kernel build has no bzImage"
	corrupt_run kernel "$KERNEL_DIR/bzImage" "fw_cfg: the kernel ("
}

@test "qpod firmware: 1, 2 and 4 vCPUs are seen by the guest (its MP table), interrupts through the I/O APIC" {
	run qp run --mode vm --boot cold --rm "$ROOTFS" -- sh -c 'grep -c ^processor /proc/cpuinfo; grep -c IO-APIC /proc/interrupts'
	assert_status 0
	assert_eq "${lines[0]}" 1 "CPUs"
	[ "${lines[1]}" -gt 0 ] || flunk "no interrupt through the I/O APIC: $output"
	run qp run --mode vm --boot cold --vcpus 2 --rm "$ROOTFS" -- sh -c 'grep -c ^processor /proc/cpuinfo'
	assert_status 0
	assert_eq "$output" 2
	run qp run --mode vm --boot cold --vcpus 4 --rm "$ROOTFS" -- sh -c 'grep -c ^processor /proc/cpuinfo; grep -c IO-APIC /proc/interrupts'
	assert_status 0
	assert_eq "${lines[0]}" 4 "CPUs"
	[ "${lines[1]}" -gt 0 ] || flunk "no interrupt through the I/O APIC: $output"
}
