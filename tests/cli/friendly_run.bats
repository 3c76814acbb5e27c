#!/usr/bin/env bats
# tests/cli/friendly_run.bats — `qpod run [OPTIONS] ROOTFS -- CMD ARGS...`:
# exit statuses, stdio, --rm/--name, -e, -w, --hostname, --user, sizes,
# --mode, and signal forwarding.

load helpers

@test "run --rm ROOTFS -- true" {
	run --separate-stderr qp run --rm "$ROOTFS" -- "$HELPER" true
	assert_status 0
	assert_eq "$output" "" "stdout"
	assert_eq "$(qp list --quiet)" "" "pods left in list"
}

@test "exit status propagation: 0, 3, 255, killed by KILL and TERM" {
	local want
	for want in 0 3 255; do
		run --separate-stderr qp run --rm "$ROOTFS" -- "$HELPER" exit "$want"
		assert_status "$want"
	done
	# with --init the workload is not PID 1, so it can die of its own signal
	run --separate-stderr qp run --rm --init "$ROOTFS" -- sh -c 'kill -KILL $$'
	assert_status 137
	run --separate-stderr qp run --rm --init "$ROOTFS" -- sh -c 'kill -TERM $$'
	assert_status 143
	# without it the workload is PID 1, and the kernel drops its own signal
	run --separate-stderr qp run --rm "$ROOTFS" -- sh -c 'kill -TERM $$; echo alive'
	assert_status 0
	assert_eq "$output" alive "PID 1 ignores its own TERM"
}

@test "stdin, stdout and stderr pass through" {
	run --separate-stderr bash -c 'echo hello-in | "$1" --root "$2" run --rm "$3" -- sh -c "cat; echo err-line >&2"' \
		_ "$QPOD" "$ROOT" "$ROOTFS"
	assert_status 0
	assert_eq "$output" hello-in "stdout"
	assert_eq "$stderr" err-line "stderr"
}

@test "exec -i: qpod's stdin reaches the exec'd process (a line; 1 MB whole, in order); /dev/null gives nothing" {
	check_exec_stdin container
}

@test "--name without --rm keeps the stopped pod until delete" {
	run --separate-stderr qp run --name "$ID" "$ROOTFS" -- "$HELPER" exit 4
	assert_status 4
	assert_eq "$(pod_field "$ID" status)" stopped "status"
	assert_eq "$(pod_field "$ID" mode)" container "mode"
	run --separate-stderr qp list
	assert_status 0
	grep -qE "^$ID +0 +stopped " <<<"$output" || flunk "list:" "$output"
	run --separate-stderr qp delete "$ID"
	assert_status 0
	assert_eq "$(qp list --quiet)" "" "pods left"
}

@test "--name with --rm deletes the pod; the ID is free again" {
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- "$HELPER" true
	assert_status 0
	run --separate-stderr qp state "$ID"
	assert_qpod_error 125
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- "$HELPER" true
	assert_status 0
}

@test "-e K=V, -w DIR, --hostname H, --user UID:GID" {
	run --separate-stderr qp run --rm -e QPOD_A=1 -e QPOD_B="two words" "$ROOTFS" -- "$HELPER" env
	assert_status 0
	assert_contains "$output" "QPOD_A=1" "env"
	assert_contains "$output" "QPOD_B=two words" "env"
	assert_contains "$output" "PATH=" "env"

	run --separate-stderr qp run --rm -w /tmp "$ROOTFS" -- "$HELPER" cwd
	assert_status 0
	assert_eq "$output" /tmp "cwd"

	run --separate-stderr qp run --rm --hostname friendly-host "$ROOTFS" -- "$HELPER" hostname
	assert_status 0
	assert_eq "$output" friendly-host "hostname"

	run --separate-stderr qp run --rm --user 65534:65534 "$ROOTFS" -- "$HELPER" ids
	assert_status 0
	assert_match "$output" '^uid=65534 gid=65534 ' "ids"
	run --separate-stderr qp run --rm --user 65534 "$ROOTFS" -- "$HELPER" ids
	assert_status 0
	assert_match "$output" '^uid=65534 ' "ids"
}

@test "sizes: 64M, 1G, 512k and plain bytes are accepted; junk is refused" {
	local size
	for size in 64M 1G 512k 67108864; do
		run --separate-stderr qp run --rm --memory "$size" "$ROOTFS" -- "$HELPER" true
		assert_status 0
	done
	for size in 12X -1 0 "" 1.5G 99999999999999999999; do
		run --separate-stderr qp run --rm --memory "$size" "$ROOTFS" -- "$HELPER" true
		assert_qpod_error 125
	done
	for bad in "--cpus abc" "--cpus 0" "--pids 0" "--pids many" "--mode bogus" "--user root"; do
		# shellcheck disable=SC2086 # split "--opt value"
		run --separate-stderr qp run --rm $bad "$ROOTFS" -- "$HELPER" true
		assert_qpod_error 125
	done
}

@test "--mode container is the default and is accepted" {
	run --separate-stderr qp run --rm --mode container "$ROOTFS" -- "$HELPER" true
	assert_status 0
}

@test "SIGINT and SIGTERM to qpod run reach the workload" {
	local sig
	for sig in INT TERM; do
		bg_qp run --rm --name "$ID" "$ROOTFS" -- "$HELPER" sigwait
		wait_for 200 grep -q ready "$TEST_DIR/bg.out"
		kill -"$sig" "$BG_PID"
		local rc=0
		wait "$BG_PID" || rc=$?
		assert_eq "$(cat "$TEST_DIR/bg.out")" "ready"$'\n'"SIG$sig" "workload output"
		assert_eq "$rc" 0 "exit status"
	done
}

@test "missing ROOTFS, missing command, bad arguments" {
	run --separate-stderr qp run --rm "$TEST_DIR/no-such-rootfs" -- "$HELPER" true
	assert_qpod_error 125
	run --separate-stderr qp run --rm "$ROOTFS"
	assert_qpod_error 125
	run --separate-stderr qp run --rm
	assert_qpod_error 125
	run --separate-stderr qp run --rm --no-such-option "$ROOTFS" -- true
	assert_qpod_error 125
}

@test "run -t: the workload on a terminal of its own, relayed to qpod's (raw meanwhile, restored after), its size followed" {
	check_run_tty container
}

@test "exec -t without --console-socket: qpod's own terminal (also under script(1)), restored after" {
	check_exec_tty container
}
