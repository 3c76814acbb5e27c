#!/usr/bin/env bats
# tests/cli/blocking.bats — no pod blocks another command for long (issue
# 15): list and state take no lock, delete --force does not wait for an
# exec, a guest that never answers RUN gets a stated timeout, a dead VM
# monitor is reported, a start whose state cannot be recorded stops the
# pod, and odd option groups are named in the error.  Every wait here is
# bounded by timeout(1) so a regression fails instead of hanging; no test
# asserts a duration.

load helpers

FAKE_QEMU=$BATS_TEST_DIRNAME/fake-qemu.py

setup() {
	setup_common
	LOCK_PID=
	TMPFS=
}

teardown() {
	if [ -n "$LOCK_PID" ]; then
		kill "$LOCK_PID" 2>/dev/null
		wait "$LOCK_PID" 2>/dev/null
	fi
	rm -f "$ROOT/.fill"
	teardown_common
	if [ -n "$TMPFS" ]; then umount "$TMPFS" 2>/dev/null; fi
	return 0
}

@test "list and state do not wait for a pod whose lock is held (a slow create or start)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp_detached create "$ID" --bundle "$BUNDLE"
	# hold the pod's lock as a slow VM start does
	# (exec: the lock holder is $LOCK_PID itself, which teardown kills)
	(exec 9<"$ROOT/$ID" && flock -x 9 && exec sleep 120) 3>&- &
	LOCK_PID=$!
	wait_for 100 bash -c "! flock -n -s '$ROOT/$ID' true"
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" list --format json
	assert_status 0
	assert_eq "$(jq -r --arg id "$ID" '.[] | select(.id == $id) | .status' <<<"$output")" created "list"
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" state "$ID"
	assert_status 0
	assert_eq "$(jq -r .status <<<"$output")" created "state"
}

@test "delete --force does not wait for a running exec to end" {
	make_bundle "$BUNDLE" "$(helper_args sleep 600)"
	qp_detached run -d "$ID" --bundle "$BUNDLE"
	bg_qp exec "$ID" -- "$HELPER" sleep 600
	wait_for 200 bash -c "[ \$(\"$QPOD\" --root \"$ROOT\" ps \"$ID\" | wc -l) -ge 2 ]"
	run --separate-stderr timeout 30 "$QPOD" --root "$ROOT" delete --force "$ID"
	assert_status 0
	run timeout 30 bash -c "while kill -0 $BG_PID 2>/dev/null; do sleep 0.1; done"
	assert_status 0
}

@test "vm: a guest that says hello and never answers RUN: a stated timeout in run and run -d" {
	need_vm
	command -v python3 >/dev/null || skip "python3 is not installed (the fake QEMU)"
	vm_env
	run --separate-stderr env QPOD_QEMU="$FAKE_QEMU" FAKE_GUEST=hello QPOD_VM_START_TIMEOUT_MS=1500 \
		timeout 60 "$QPOD" --root "$ROOT" run --mode vm --boot cold --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "the VM did not start the workload within 1500 ms of RUN"
	make_bundle "$BUNDLE" '.annotations = {"qpod.mode": "vm", "qpod.vm.boot": "cold"}'
	QPOD_QEMU="$FAKE_QEMU" FAKE_GUEST=hello QPOD_VM_START_TIMEOUT_MS=1500 \
		timeout 60 "$QPOD" --root "$ROOT" run -d "$ID" --bundle "$BUNDLE" \
		</dev/null >"$TEST_DIR/cmd.out" 2>"$TEST_DIR/cmd.err" && flunk "run -d succeeded"
	qp_file_stderr
	assert_contains "$stderr" "the VM did not start the workload within 1500 ms of RUN"
	pgrep -f "$FAKE_QEMU" >/dev/null && flunk "fake qemu left running"
	return 0
}

@test "vm: a STARTED with an out-of-range pid fails a foreground run with the reason, never hangs it" {
	need_vm
	command -v python3 >/dev/null || skip "python3 is not installed (the fake QEMU)"
	vm_env
	run --separate-stderr env QPOD_QEMU="$FAKE_QEMU" FAKE_GUEST=badstart \
		timeout -k 5 60 "$QPOD" --root "$ROOT" run --mode vm --boot cold --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "out of range"
	pgrep -f "$FAKE_QEMU" >/dev/null && flunk "fake qemu left running"
	return 0
}

@test "vm: a monitor killed with SIGKILL leaves a stop reason, not null" {
	need_vm
	command -v python3 >/dev/null || skip "python3 is not installed (the fake QEMU)"
	vm_env
	make_bundle "$BUNDLE" '.annotations = {"qpod.mode": "vm", "qpod.vm.boot": "cold"}'
	QPOD_QEMU="$FAKE_QEMU" FAKE_GUEST=hello timeout 60 "$QPOD" --root "$ROOT" create "$ID" --bundle "$BUNDLE" \
		</dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" || flunk "create: $(cat "$TEST_DIR/pod.err")"
	local mon
	mon=$(pod_field "$ID" pid)
	kill -KILL "$mon"
	wait_for 100 status_is "$ID" stopped
	assert_eq "$(pod_field "$ID" stop_reason)" "the pod's VM monitor died" "stop_reason"
	run --separate-stderr timeout 30 "$QPOD" --root "$ROOT" delete "$ID"
	assert_status 0
}

@test "start on a full state file system: the failure is true (the pod is stopped), nothing left" {
	mkdir -p "$ROOT"
	mount -t tmpfs -o size=256k,mode=0700 qpod-test "$ROOT"
	TMPFS=$ROOT
	make_bundle "$BUNDLE" "$(helper_args sleep 600)"
	qp_detached create "$ID" --bundle "$BUNDLE"
	dd if=/dev/zero of="$ROOT/.fill" bs=4k 2>/dev/null || true
	run --separate-stderr qp start "$ID"
	assert_qpod_error 125
	assert_contains "$stderr" "stopped: its state could not be recorded"
	rm -f "$ROOT/.fill"
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"
}

@test "create -rf --bundle B names the unknown option, not the command" {
	run --separate-stderr qp create -rf --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_eq "$stderr" 'qpod: create: unknown option "-r" (see qpod create --help)'
}
