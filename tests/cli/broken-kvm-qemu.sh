#!/bin/sh
# tests/cli/broken-kvm-qemu.sh — QEMU as it behaves under broken nested KVM
# (the development machines): with "-accel kvm" it dies as QEMU 7.2 does
# there ("failed to set MSR", then an assertion and SIGABRT); anything else
# runs the real qemu-system-x86_64.  Set as QPOD_QEMU by tests/cli/vm.bats.
for a in "$@"; do
	if [ "$a" = kvm ]; then
		echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
		echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion failed." >&2
		kill -ABRT $$
	fi
done
exec qemu-system-x86_64 "$@"
