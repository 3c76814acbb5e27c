#!/usr/bin/env bats
# tests/cli/install.bats — `make install DESTDIR=D PREFIX=/usr` puts the
# binary, guest-init, the guest kernel and its command line, the
# traditional-VM runner, the libvirt helper, qpod(8) and the bash completion where the installed
# qpod finds them (util/paths.h: PREFIX/lib/qpod beside PREFIX/bin/qpod);
# the installed binary runs a container pod and a VM pod from there (the
# kernel cache hidden, so the installed kernel is the one found), and
# `make uninstall` leaves no file behind.

load helpers

setup() {
	setup_common
	DEST=$TEST_DIR/dest
}

teardown() {
	[ -n "${DEST:-}" ] && make -s -C "$REPO" uninstall DESTDIR="$DEST" PREFIX=/usr >/dev/null 2>&1
	teardown_common
}

@test "make install into a DESTDIR: a container and a VM pod run from there; make uninstall removes it all" {
	run make -s -C "$REPO" install DESTDIR="$DEST" PREFIX=/usr
	assert_status 0
	local f
	for f in usr/bin/qpod usr/lib/qpod/qpod-init usr/lib/qpod/vmlinux usr/lib/qpod/cmdline.txt \
		usr/lib/qpod/qpod-tradvm usr/lib/qpod/qpod-firmware.bin usr/lib/qpod/qpod-libvirt usr/share/man/man8/qpod.8 usr/share/bash-completion/completions/qpod; do
		[ -s "$DEST/$f" ] || flunk "not installed: $f"
	done
	local q=$DEST/usr/bin/qpod
	cd "$TEST_DIR" # nowhere near the build tree
	run --separate-stderr "$q" --root "$ROOT" run --rm "$ROOTFS" -- /bin/echo installed-container
	assert_status 0
	assert_eq "$output" "installed-container"

	if command -v qemu-system-x86_64 >/dev/null; then
		# no overrides, and an empty cache: what the VM uses comes from
		# $DEST/usr/lib/qpod or nowhere
		local env=(env -u QPOD_KERNEL -u QPOD_GUEST_INIT -u QPOD_KERNEL_CMDLINE
			QPOD_CACHE="$TEST_DIR/empty-cache" QPOD_ACCEL=tcg)
		mkdir -p "$TEST_DIR/empty-cache"
		if [ ! -e /usr/lib/qpod/vmlinux ]; then
			mv "$DEST/usr/lib/qpod/vmlinux" "$TEST_DIR/vmlinux.aside"
			run --separate-stderr "${env[@]}" "$q" --root "$ROOT" run --rm --mode vm "$ROOTFS" -- /bin/true
			assert_qpod_error
			assert_contains "$stderr" "guest kernel not found"
			mv "$TEST_DIR/vmlinux.aside" "$DEST/usr/lib/qpod/vmlinux"
		fi
		run --separate-stderr "${env[@]}" "$q" --root "$ROOT" run --rm --mode vm "$ROOTFS" -- /bin/echo installed-vm
		assert_status 0
		assert_eq "$output" "installed-vm"

		# a libvirt pod: a static qpod hands it to the installed
		# qpod-libvirt, which finds the installed kernel as qpod does
		# (it gets as far as the daemon, which is not there)
		local lv=(--mode vm --vm-backend libvirt --libvirt-uri "qemu+unix:///system?socket=$TEST_DIR/no-libvirtd")
		run --separate-stderr "${env[@]}" "$q" --debug --root "$ROOT" run --rm "${lv[@]}" "$ROOTFS" -- /bin/true
		assert_status 125 # (--debug: more than the error's one line)
		assert_contains "$stderr" "connect to qemu+unix:///system?socket=$TEST_DIR/no-libvirtd"
		if ! readelf -l "$q" | grep -q "program interpreter"; then
			assert_contains "$stderr" "handed to $DEST/usr/bin/../lib/qpod/qpod-libvirt (this qpod is static)"
			mv "$DEST/usr/lib/qpod/qpod-libvirt" "$TEST_DIR/qpod-libvirt.aside"
			run --separate-stderr "${env[@]}" "$q" --root "$ROOT" run --rm "${lv[@]}" "$ROOTFS" -- /bin/true
			assert_qpod_error
			assert_contains "$stderr" "qpod-libvirt (qpod linked dynamically) is not installed beside it"
			# a helper that is static itself: an error, never a loop of execs
			cp "$q" "$DEST/usr/lib/qpod/qpod-libvirt"
			run --separate-stderr timeout 20 "${env[@]}" "$q" --root "$ROOT" run --rm "${lv[@]}" "$ROOTFS" -- /bin/true
			mv -f "$TEST_DIR/qpod-libvirt.aside" "$DEST/usr/lib/qpod/qpod-libvirt"
			assert_qpod_error
			assert_contains "$stderr" "qpod-libvirt is linked statically too and cannot load libvirt"
		fi
		run "$q" --root "$ROOT" list -q
		assert_eq "$output" "" "a refused libvirt pod left state"
	fi

	run make -s -C "$REPO" uninstall DESTDIR="$DEST" PREFIX=/usr
	assert_status 0
	run find "$DEST" ! -type d
	assert_status 0
	assert_eq "$output" "" "files left after make uninstall"
	[ ! -e "$DEST/usr/lib/qpod" ] || flunk "usr/lib/qpod left after make uninstall"
}
