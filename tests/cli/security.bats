#!/usr/bin/env bats
# tests/cli/security.bats — the default seccomp profile, no host fds in the
# pod, cwd escapes (CVE-2024-21626 class), symlinked mount destinations
# (CVE-2021-30465 class), and /proc/1/exe overwrite (CVE-2019-5736 class).

load helpers

@test "seccomp: dangerous calls get EPERM, getpid works, even with the capabilities they need" {
	local calls="keyctl unshare mount bpf perf_event_open kexec_load init_module ptrace swapon
		reboot open_by_handle_at clone_newns"
	# shellcheck disable=SC2086 # one argument per call
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- "$HELPER" syscall $calls getpid
	assert_status 0
	local c
	for c in $calls; do
		grep -qx "$c EPERM" <<<"$output" || flunk "$c is not EPERM:" "$output"
	done
	grep -qx "getpid OK" <<<"$output" || flunk "getpid failed:" "$output"
	# most of them also need a capability the default set lacks, so EPERM
	# could be the kernel's: with the capability each needs (those this
	# host can give) only the profile refuses them; with seccomp off too,
	# the kernel answers otherwise (so the check proves something)
	local e cap num caps=() capped=() bnd
	bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
	for e in keyctl:-:- unshare:21:CAP_SYS_ADMIN mount:21:CAP_SYS_ADMIN bpf:39:CAP_BPF \
		perf_event_open:38:CAP_PERFMON kexec_load:22:CAP_SYS_BOOT init_module:16:CAP_SYS_MODULE \
		ptrace:19:CAP_SYS_PTRACE swapon:21:CAP_SYS_ADMIN reboot:22:CAP_SYS_BOOT \
		open_by_handle_at:2:CAP_DAC_READ_SEARCH clone_newns:21:CAP_SYS_ADMIN; do
		IFS=: read -r c num cap <<<"$e"
		if [ "$num" = - ]; then capped+=("$c"); continue; fi
		(((bnd >> num) & 1)) || continue
		capped+=("$c")
		caps+=("$cap")
	done
	[ "${#capped[@]}" -gt 1 ] || flunk "this host can give none of the capabilities"
	make_bundle "$BUNDLE" "$(helper_args syscall "${capped[@]}")
		| .process.capabilities |= with_entries(if .key == \"inheritable\" or .key == \"ambient\" then .
			else .value += $(printf '%s\n' "${caps[@]}" | jq -R . | jq -sc .) end)"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	for c in "${capped[@]}"; do
		grep -qx "$c EPERM" <<<"$output" || flunk "$c is not EPERM with its capabilities:" "$output"
	done
	jq 'del(.linux.seccomp)' "$BUNDLE/config.json" >"$BUNDLE/c.json" && mv "$BUNDLE/c.json" "$BUNDLE/config.json"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	for c in "${capped[@]}"; do
		grep -q "^$c " <<<"$output" || flunk "$c: no answer without seccomp:" "$output"
		grep -qx "$c EPERM" <<<"$output" && flunk "$c is EPERM without seccomp, with its capability: the check would prove nothing" "$output"
	done
	return 0
}

@test "seccomp applies to exec'd processes too" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr qp exec "$ID" -- "$HELPER" syscall keyctl bpf getpid
	assert_status 0
	assert_eq "$output" "keyctl EPERM"$'\n'"bpf EPERM"$'\n'"getpid OK" "syscalls in exec"
}

@test "fds: only 0 1 2 inside, even when the caller holds fd 5 and 7" {
	run --separate-stderr bash -c 'exec 5</etc/hostname 7>"$1/x"; exec "$2" --root "$3" run --rm "$4" -- "$5" fds' \
		_ "$TEST_DIR" "$QPOD" "$ROOT" "$ROOTFS" "$HELPER"
	assert_status 0
	assert_eq "$output" "0 1 2" "fds in a run pod"

	make_bundle "$BUNDLE" "$(helper_args fds)"
	run --separate-stderr bash -c 'exec 5</etc/hostname 7>"$1/x"; exec "$2" --root "$3" run "$4" --bundle "$5"' \
		_ "$TEST_DIR" "$QPOD" "$ROOT" "$ID" "$BUNDLE"
	assert_status 0
	assert_eq "$output" "0 1 2" "fds in an OCI run pod"
}

@test "fds: exec does not leak the caller's fds" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr bash -c 'exec 5</etc/hostname 7>"$1/x"; exec "$2" --root "$3" exec "$4" -- "$5" fds' \
		_ "$TEST_DIR" "$QPOD" "$ROOT" "$ID" "$HELPER"
	assert_status 0
	assert_eq "$output" "0 1 2" "fds in exec"
}

# A run either fails cleanly (status >= 125, one "qpod: " line) or its cwd is
# inside the pod.  $1: what was tried.
assert_cwd_contained() {
	if [ "$status" -eq 0 ]; then
		assert_not_contains "$output" "(unreachable)" "$1: cwd"
		assert_match "$output" '^/' "$1: cwd"
	else
		[ "$status" -ge 125 ] || flunk "$1: exit status $status" "$output" "$stderr"
		assert_qpod_error "$status"
	fi
}

@test "cwd: -w /proc/self/fd/N cannot reach the host (CVE-2024-21626 class)" {
	local n
	for n in 3 4 5 6 7 8 9 10; do
		run --separate-stderr bash -c 'exec 5</ 7</sys/fs/cgroup; exec "$1" --root "$2" run --rm -w "/proc/self/fd/$3" "$4" -- "$5" cwd' \
			_ "$QPOD" "$ROOT" "$n" "$ROOTFS" "$HELPER"
		assert_cwd_contained "run -w /proc/self/fd/$n"
	done
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	for n in 3 4 5 6 7 8 9 10; do
		run --separate-stderr bash -c 'exec 5</ 7</sys/fs/cgroup; exec "$1" --root "$2" exec -w "/proc/self/fd/$3" "$4" -- "$5" cwd' \
			_ "$QPOD" "$ROOT" "$n" "$ID" "$HELPER"
		assert_cwd_contained "exec -w /proc/self/fd/$n"
	done
}

@test "cwd from the spec is resolved inside the rootfs" {
	make_bundle "$BUNDLE" "$(helper_args cwd) | .process.cwd = \"/../../../tmp\""
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_cwd_contained "cwd /../../../tmp"
	[ "$status" -ne 0 ] || assert_eq "$output" /tmp "cwd"
}

@test "a mount under a symlink to / stays inside the rootfs (CVE-2021-30465 class)" {
	[ ! -e /etc/foo ] || skip "the host has /etc/foo"
	local rootfs=$TEST_DIR/rootfs before after
	cp -a "$ROOTFS" "$rootfs"
	rm -rf "$rootfs/etc"
	ln -s / "$rootfs/etc"
	mkdir -p "$TEST_DIR/src"
	echo marker >"$TEST_DIR/src/file"
	make_bundle "$BUNDLE" "$(helper_args true) | .root.path = \"$rootfs\"
		| .mounts += [{\"destination\": \"/etc/foo\", \"type\": \"bind\",
			\"source\": \"$TEST_DIR/src\", \"options\": [\"bind\"]}]"
	before=$(ls -la --time-style=full-iso /etc | sha256sum)
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	after=$(ls -la --time-style=full-iso /etc | sha256sum)
	[ ! -e /etc/foo ] || { rmdir /etc/foo 2>/dev/null; flunk "qpod created /etc/foo on the host"; }
	assert_eq "$after" "$before" "host /etc listing"
	grep -q " /etc/foo " /proc/self/mountinfo && flunk "a mount on the host's /etc/foo"
	if [ "$status" -ne 0 ]; then
		assert_qpod_error "$status"
	fi
	return 0
}

@test "/proc/1/exe cannot be opened for writing; the host's qpod is unchanged (CVE-2019-5736 class)" {
	local before after
	before=$(sha256sum <"$QPOD")
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- sh -c "$HELPER writefile /proc/1/exe;
		$HELPER writefile /proc/self/exe; echo x 2>/dev/null >/proc/1/exe; true"
	assert_status 0
	assert_match "${lines[0]}" '^E[A-Z]+$' "writefile /proc/1/exe"
	assert_match "${lines[1]}" '^E[A-Z]+$' "writefile /proc/self/exe"

	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID2" --bundle "$BUNDLE"
	qp start "$ID2"
	run --separate-stderr qp exec "$ID2" -- "$HELPER" writefile /proc/1/exe
	assert_status 1
	assert_match "$output" '^E[A-Z]+$' "writefile /proc/1/exe from exec"
	qp delete --force "$ID2"
	# those opens fail for the kernel's own reasons too (a running binary,
	# a process that is not dumpable); the defence is that qpod's processes
	# in a pod run from a guarded view, never from the binary on the host's
	# disk (util/exe_guard.h): the next tests take a pod's init from the host
	qp_detached run -d --init --name "$ID2" "$ROOTFS" -- sleep 60
	local pid
	pid=$(pod_field "$ID2" pid)
	assert_eq "$(cat "/proc/$pid/comm")" qpod-init "the pod's pid 1"
	assert_not_contains "$(readlink "/proc/$pid/exe")" "$(basename "$(dirname "$QPOD")")/" "the binary of the pod's init"
	qp delete --force "$ID2"
	after=$(sha256sum <"$QPOD")
	assert_eq "$after" "$before" "sha256 of $QPOD"
}

# The attack of CVE-2019-5736 from the host's side: hold the binary of a
# pod's init (qpod itself until its exec) through /proc/PID/exe, and reopen
# it for writing while it runs and after it is gone.  Unguarded, the first
# open fails only with ETXTBSY (a running binary) and the second succeeds on
# the host's qpod: both must fail here.
@test "exe guard: qpod enters a pod through a read-only overlayfs view of its binary (CVE-2019-5736 class)" {
	grep -qw overlay /proc/filesystems || skip "this kernel has no overlayfs (the memfd guard runs)"
	local pid fd
	QPOD_EXE_GUARD= qp_detached --debug run -d --init --name "$ID" "$ROOTFS" -- sleep 60
	pid=$(pod_field "$ID" pid)
	assert_eq "$(stat -L -f -c %T "/proc/$pid/exe")" overlayfs "the file system of the pod's init's binary"
	exec {fd}<"/proc/$pid/exe"
	run "$ROOTFS$HELPER" writefile "/proc/$pid/exe"
	assert_eq "$output" EROFS "writefile /proc/$pid/exe of the pod's init"
	qp delete --force "$ID"
	run "$ROOTFS$HELPER" writefile "/proc/self/fd/$fd"
	exec {fd}<&-
	assert_eq "$output" EROFS "writefile of the held binary after the pod's init is gone"
	assert_contains "$(<"$TEST_DIR/pod.err")" "qpod: exe guard: a read-only overlayfs view of $(realpath "$QPOD")" "the --debug log"
	# the re-executed qpod knows it is guarded: one re-exec, not a loop
	QPOD_EXE_GUARD= run --separate-stderr qp --debug run --rm "$ROOTFS" -- true
	assert_status 0
	assert_eq "$(grep -c 'exe guard:' <<<"$stderr")" 1 "exe guard lines in the --debug log"
}

@test "exe guard: the sealed memfd fallback (QPOD_EXE_GUARD=memfd) protects too" {
	local pid fd before
	before=$(sha256sum <"$QPOD")
	QPOD_EXE_GUARD=memfd qp_detached --debug run -d --init --name "$ID" "$ROOTFS" -- sleep 60
	assert_contains "$(<"$TEST_DIR/pod.err")" "qpod: exe guard: a sealed memfd copy (QPOD_EXE_GUARD=memfd)" "the --debug log"
	pid=$(pod_field "$ID" pid)
	# a copy (so the write below could reach no file of the host's)...
	assert_match "$(readlink "/proc/$pid/exe")" '^/memfd:qpod ' "the binary of the pod's init"
	exec {fd}<"/proc/$pid/exe"
	qp delete --force "$ID"
	# ...and sealed: a write into it fails once nothing runs it any more
	run bash -c "printf x 1<>/proc/self/fd/$fd"
	exec {fd}<&-
	assert_status 1
	assert_contains "$output" "Operation not permitted" "a write into the held copy"
	assert_eq "$(sha256sum <"$QPOD")" "$before" "sha256 of $QPOD"
}

@test "exe guard: QPOD_EXE_GUARD takes auto or memfd only, and never switches the guard off" {
	QPOD_EXE_GUARD=none run --separate-stderr qp run --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_eq "${stderr_lines[0]}" 'qpod: QPOD_EXE_GUARD must be auto or memfd, not "none"'
}
