#!/usr/bin/env bats
# tests/cli/vm.bats — microVM pods: `qpod run --mode vm ROOTFS -- CMD` (output,
# exit status) and every lifecycle command:
# OCI bundles with qpod.mode=vm (create, state, start, exec, kill, list,
# delete) served by the pod's monitor from separate qpod processes, tap
# networking in a private network namespace, firmware and accel choices, and
# the faults (QEMU killed during start and while running, a guest that never
# says hello or sends garbage, missing kernel/firmware). The common teardown
# asserts that no QEMU, monitor, state dir or link is left.

load helpers

FAKE_QEMU=$BATS_TEST_DIRNAME/fake-qemu.py

setup() { setup_vm; }

teardown() {
	teardown_common
	if [ -n "${NS:-}" ]; then ip netns del "$NS" 2>/dev/null || true; fi
}

qemu_of() { # the QEMU pid of pod ID (from state)
	pod_field "$1" vmm_pid
}

@test "vm lifecycle: create, state, start, exec, kill, delete from separate processes" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sh", "-c", "echo workload-out; sleep 60"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	assert_eq "$(pod_field "$ID" status)" created
	assert_eq "$(pod_field "$ID" mode)" vm
	assert_eq "$(pod_field "$ID" accel)" "${QPOD_ACCEL:-tcg}"
	qpid=$(qemu_of "$ID")
	assert_match "$(tr '\0' ' ' </proc/"$qpid"/cmdline)" 'qemu-system-x86_64 .*-M microvm.*qboot/qpod-firmware.bin' "VMM: qpod's firmware"
	tr '\0' '\n' </proc/"$qpid"/environ | grep -q '^GLIBC_TUNABLES=.*glibc.malloc.hugetlb=1' ||
		flunk "QEMU's heap is not on huge pages: $(tr '\0' ' ' </proc/"$qpid"/environ)"
	assert_eq "$(qp list --format json | jq -r --arg id "$ID" '.[] | select(.id == $id) | .status')" created "list"
	run qp start "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running
	# a cold boot's phases, or a template clone's (the default, boot auto)
	qp state "$ID" | jq -e '.timeline.start_total > 0 and ((.timeline.kernel > 0 and .timeline.firmware >= 0) or
		(.timeline.restore > 0 and .timeline.resume >= 0))' >/dev/null ||
		flunk "no start timeline in state: $(qp state "$ID")"
	run --separate-stderr qp exec "$ID" sh -c 'echo exec-out; echo exec-err >&2; exit 5'
	assert_status 5
	assert_eq "$output" exec-out "exec stdout"
	assert_eq "$stderr" exec-err "exec stderr"
	run -127 --separate-stderr qp exec "$ID" /no/such/binary
	assert_qpod_error 127
	assert_contains "$stderr" "/no/such/binary"
	run qp kill "$ID" TERM
	assert_status 0
	wait_for 100 status_is "$ID" stopped
	assert_match "$(pod_field "$ID" stop_reason)" "exited with status 143|powered off" "stop reason"
	wait_for 100 grep -q workload-out "$TEST_DIR/pod.out"
	run qp delete "$ID"
	assert_status 0
	[ ! -e "/proc/$qpid" ] || flunk "qemu $qpid still there"
}

@test "vm lifecycle: kill of a created pod stops it; delete --force of a running one" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "60"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	run qp kill "$ID" KILL
	assert_status 0
	wait_for 100 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "before start"
	run qp delete "$ID"
	assert_status 0
	qp_detached run --detach --bundle "$BUNDLE" "$ID2"
	assert_eq "$(pod_field "$ID2" status)" running
	run --separate-stderr qp delete "$ID2"
	assert_qpod_error
	run qp delete --force "$ID2"
	assert_status 0
}

@test "vm faults: qemu killed while running: stopped with the reason, resources freed" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "60"]'
	qp_detached run --detach --bundle "$BUNDLE" "$ID"
	qpid=$(qemu_of "$ID")
	kill -KILL "$qpid"
	wait_for 100 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "qemu killed by signal 9"
	[ ! -S "$ROOT/$ID/ctl.sock" ] || flunk "ctl.sock left"
	run qp delete "$ID"
	assert_status 0
}

@test "vm faults: qemu killed during start: create fails with the reason, nothing left" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.boot"] = "cold" | .process.terminal = false | .process.args = ["true"]'
	# a guest that never says hello keeps create waiting; kill QEMU meanwhile
	# (a cold boot: the fault paths of templates are template.bats')
	export QPOD_GUEST_INIT=/bin/busybox
	bg_qp create --bundle "$BUNDLE" "$ID"
	wait_for 200 pgrep -f -- "-initrd $ROOT/$ID/initrd.cpio"
	kill -KILL "$(pgrep -f -- "-initrd $ROOT/$ID/initrd.cpio")"
	wait "$BG_PID" && flunk "create succeeded"
	run cat "$TEST_DIR/bg.err"
	assert_contains "$output" "qemu killed by signal 9"
	[ ! -e "$ROOT/$ID" ] || flunk "state dir left"
}

@test "vm faults: a guest that never says hello: timeout error, cleanup" {
	run --separate-stderr env QPOD_GUEST_INIT=/bin/busybox QPOD_VM_HELLO_TIMEOUT_MS=3000 \
		timeout 60 "$QPOD" --root "$ROOT" run --mode vm --boot cold --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "did not say hello within 3000 ms"
}

@test "vm faults: a hostile guest (garbage, oversized, endless, wrong type, output beyond its credit) ends the pod cleanly" {
	local mode want
	for mode in garbage oversize endless badtype; do
		case $mode in
		garbage) want="bad magic" ;;
		oversize) want="exceeds the 65536 byte limit" ;;
		endless) want="did not say hello" ;;
		badtype) want="RUN message" ;;
		esac
		run --separate-stderr env FAKE_GUEST=$mode QPOD_QEMU="$FAKE_QEMU" QPOD_VM_HELLO_TIMEOUT_MS=1500 \
			timeout 30 "$QPOD" --root "$ROOT" run --mode vm --boot cold --rm "$ROOTFS" -- true
		assert_qpod_error
		assert_contains "$stderr" "$want" "$mode"
		pgrep -f "$FAKE_QEMU" && flunk "fake qemu ($mode) left running"
	done
	# output beyond the window while qpod's stdout is not read (the host
	# credits only what it passed on: read, it would all be credited)
	run bash -c 'FAKE_GUEST=flood QPOD_QEMU="$4" timeout -k 5 60 "$1" --root "$2" run --mode vm --boot cold --rm "$3" -- true \
		2>"$5" | { sleep 2; wc -c >/dev/null; }; exit "${PIPESTATUS[0]}"' _ "$QPOD" "$ROOT" "$ROOTFS" "$FAKE_QEMU" "$TEST_DIR/flood.err"
	assert_status 125
	assert_contains "$(cat "$TEST_DIR/flood.err")" "the VM sent more output than its credit"
	pgrep -f "$FAKE_QEMU" && flunk "fake qemu (flood) left running"
	return 0
}

@test "vm faults: missing kernel, firmware, bad accel, blockIO" {
	run --separate-stderr env QPOD_KERNEL=/no/such/vmlinux "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" 'guest kernel "/no/such/vmlinux" not found'
	run --separate-stderr qp run --mode vm --firmware /no/such/rom --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" 'firmware "/no/such/rom" not found'
	run --separate-stderr qp run --mode vm --firmware bios.bin --rm "$ROOTFS" -- true
	assert_qpod_error
	run --separate-stderr qp run --mode vm --accel fast --rm "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "--accel must be auto, kvm or tcg"
	run --separate-stderr qp run --mode vm --vcpus 0 --rm "$ROOTFS" -- true
	assert_qpod_error
	# a VM pod has no block device for blockIO to act on: refused, not ignored
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["true"]
		| .linux.resources.blockIO = {weight: 200}'
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_contains "$stderr" "blockIO: not supported for vm pods"
	[ ! -e "$ROOT/$ID" ] || flunk "state left"
}

@test "vm: QPOD_TCG_TB_SIZE sizes TCG's translation cache; a value that is not 1..4096 MiB is refused, nothing left" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "30"]'
	QPOD_ACCEL=tcg QPOD_TCG_TB_SIZE=48 qp_detached run --detach --bundle "$BUNDLE" "$ID"
	local qpid
	qpid=$(qemu_of "$ID")
	assert_match "$(tr '\0' ' ' </proc/"$qpid"/cmdline)" ' -accel tcg,tb-size=48 ' "QEMU's accel"
	qp delete --force "$ID"
	local v
	for v in 0 abc 4097 12M -5 ""; do
		run --separate-stderr env QPOD_ACCEL=tcg QPOD_TCG_TB_SIZE="$v" "$QPOD" --root "$ROOT" run --bundle "$BUNDLE" "$ID"
		assert_qpod_error
		assert_contains "$stderr" "QPOD_TCG_TB_SIZE must be a number of MiB in 1..4096, not \"$v\""
		[ ! -e "$ROOT/$ID" ] || flunk "state left for QPOD_TCG_TB_SIZE=$v"
	done
}

@test "vm: seabios firmware and 2 vCPUs" {
	run qp run --mode vm --firmware seabios --vcpus 2 --rm "$ROOTFS" -- sh -c 'grep -c ^processor /proc/cpuinfo'
	assert_status 0
	assert_eq "$output" 2
}

@test "vm: bridge network through a tap, inside a private netns" {
	NS=qpvm$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	run nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" run --mode vm --net bridge --ip 10.213.0.9 --rm "$ROOTFS" -- \
		sh -c 'ip -4 -o addr show eth0; ping -c 1 -W 5 10.213.0.1 >/dev/null && echo gateway-ok'
	assert_status 0
	assert_contains "$output" "inet 10.213.0.9/22"
	assert_contains "$output" "gateway-ok"
	# the tap died with QEMU and the lease was released
	assert_eq "$(ip -n "$NS" -o link show | grep -c ' qp[0-9a-f]\{10\}')" 0 "tap links left"
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null)" "" "leases left"
}

@test "vm: output and exit status of the workload" {
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- \
		sh -c 'echo hi; echo oops >&2; exit 3'
	assert_status 3
	assert_eq "$output" "hi" "stdout"
	assert_eq "$stderr" "oops" "stderr"
	assert_eq "$(qp list --quiet)" "" "pods left in list"
}

@test "vm: output beyond the output's window, read by a reader that pauses, arrives whole and in order" {
	# 1.3 MB: the reader's pipe, the monitor's hold and the guest's window
	# fill while it sleeps; the workload waits, nothing is dropped
	run --separate-stderr bash -c '"$1" --root "$2" run --mode vm --rm "$3" -- seq 1 200000 |
		{ sleep 3; sha256sum; }' _ "$QPOD" "$ROOT" "$ROOTFS"
	assert_status 0
	assert_eq "${output%% *}" "$(seq 1 200000 | sha256sum | cut -d' ' -f1)" "sha256 of what the reader got"
}

@test "vm: the guest posts 64 receive buffers per queue (virtio_console.rx_bufs), messages that need more arrive whole, and the idle guest uses under 10 MB" {
	for boot in cold template; do
		qp run -d --mode vm --boot "$boot" --memory 64M --name "$ID" "$ROOTFS" -- sleep 60 >/dev/null ||
			flunk "run -d --boot $boot"
		assert_eq "$(qp exec "$ID" cat /sys/module/virtio_console/parameters/rx_bufs)" 64 "rx_bufs ($boot)"
		# each EXEC carries a 60 kB argument, 15 buffers of 4 kB: eight of
		# them need the 64 posted buffers given back and posted again
		local arg i
		arg=$(head -c 60000 /dev/zero | tr '\0' x)
		for i in 1 2 3 4 5 6 7 8; do
			assert_eq "$(qp exec "$ID" sh -c 'echo ${#1}' sh "$arg")" 60000 "exec $i's argument ($boot)"
		done
		local used
		used=$(qp stats "$ID" | jq .guest.used_kb)
		[ "$used" -gt 0 ] && [ "$used" -lt 10240 ] || flunk "guest used $used kB after boot ($boot): over 10 MB"
		qp delete --force "$ID"
	done
}

@test "vm: the workload reads qpod's stdin (1 MB arrives whole, in order); one that does not read it still takes signals and execs" {
	head -c 1000000 /dev/urandom >"$TEST_DIR/in"
	run --separate-stderr timeout 60 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- sha256sum <"$TEST_DIR/in"
	assert_status 0
	assert_eq "${output%% *}" "$(sha256sum <"$TEST_DIR/in" | cut -d' ' -f1)" "sha256 of what the workload read"
	# /dev/null: no stdin relayed (the workload's is /dev/null too)
	run --separate-stderr timeout 20 "$QPOD" --root "$ROOT" run --mode vm --rm "$ROOTFS" -- sh -c 'wc -c' </dev/null
	assert_status 0
	assert_eq "$output" 0 "bytes read from /dev/null"
	# a never-ending stdin that the workload ignores: its window fills, the
	# channel stays open for an exec and the signal
	(set +e; yes | "$QPOD" --root "$ROOT" run --mode vm --name "$ID" "$ROOTFS" -- sleep 60 >"$TEST_DIR/yes.out" 2>&1
		echo "rc=$?" >>"$TEST_DIR/yes.out") 3>&- &
	local bg=$!
	wait_for 400 status_is "$ID" running
	sleep 1
	assert_eq "$(timeout 20 "$QPOD" --root "$ROOT" exec "$ID" echo exec-ok)" exec-ok "exec while stdin floods"
	timeout 20 "$QPOD" --root "$ROOT" kill "$ID" TERM || flunk "kill"
	wait_for 200 grep -q '^rc=' "$TEST_DIR/yes.out"
	wait "$bg" 2>/dev/null || true
	assert_contains "$(cat "$TEST_DIR/yes.out")" "rc=143"
	qp delete "$ID"
}

@test "vm: exec -i: qpod's stdin reaches the exec'd process (a line; 1 MB whole, in order); /dev/null gives nothing" {
	check_exec_stdin vm
}

@test "vm: exec output to a reader that stalls: nothing is lost, the exec keeps its status, the pod serves another exec meanwhile" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "600"]'
	qp_detached run --detach --bundle "$BUNDLE" "$ID"
	# 20 MB of stdout and 300 kB of stderr into pipes read 3 s late: the
	# guest holds the output within its window (before: the monitor gave
	# up on the client after 1 s, ~130 kB arrived, the exec failed)
	(set +e; timeout 120 "$QPOD" --root "$ROOT" exec "$ID" sh -c 'yes | head -c 300000 >&2; yes | head -c 20000000; exit 7' \
		2> >(sleep 3; wc -c >"$TEST_DIR/err.n") | (sleep 3; wc -c >"$TEST_DIR/out.n")
		echo "rc=${PIPESTATUS[0]}" >"$TEST_DIR/rc") &
	local bg=$!
	sleep 1
	assert_eq "$(timeout 20 "$QPOD" --root "$ROOT" exec "$ID" echo exec-ok)" exec-ok "an exec while the other's reader stalls"
	wait "$bg" || true
	wait_for 100 test -s "$TEST_DIR/err.n"
	assert_eq "$(cat "$TEST_DIR/rc")" rc=7 "the stalled exec's status"
	assert_eq "$(cat "$TEST_DIR/out.n")" 20000000 "stdout bytes"
	assert_eq "$(cat "$TEST_DIR/err.n")" 300000 "stderr bytes"
	qp delete --force "$ID"
}

# how many processes of the pod's guest run exactly ARGS (ps's args column)
guest_count() { # ID ARGS
	"$QPOD" --root "$ROOT" exec "$1" -- sh -c "ps -o args | grep -cx '$2'"
}
# exactly N of them (for wait_for: counted anew at each try)
guest_has() { # ID ARGS N
	[ "$(guest_count "$1" "$2")" = "$3" ]
}

@test "vm: a signal to qpod exec reaches the exec'd process (as runc's exec forwards them); SIGKILL of the client ends the process too" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "600"]'
	qp_detached run --detach --bundle "$BUNDLE" "$ID"
	(set +e; "$QPOD" --root "$ROOT" exec "$ID" -- sh -c 'trap "echo got-term; exit 3" TERM; sleep 101 & wait' \
		>"$TEST_DIR/term.out" 2>&1; echo "rc=$?" >>"$TEST_DIR/term.out") &
	local bg=$! pid
	wait_for 200 guest_has "$ID" 'sleep 101' 1
	pid=$(pgrep -f -P "$bg" "exec $ID") || flunk "no qpod exec process"
	kill -TERM "$pid"
	wait "$bg" || true
	assert_eq "$(cat "$TEST_DIR/term.out")" $'got-term\nrc=3' "the process's trap and status"
	# the client killed (what a shim's SIGKILL of the exec pid does): the
	# process goes with it (before: it ran on in the guest)
	"$QPOD" --root "$ROOT" exec "$ID" -- sleep 1234 >/dev/null 2>&1 &
	bg=$!
	wait_for 200 guest_has "$ID" 'sleep 1234' 1
	kill -KILL "$bg"
	wait "$bg" 2>/dev/null || true
	wait_for 100 guest_has "$ID" 'sleep 1234' 0
	qp delete --force "$ID"
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

@test "vm replace: warm replaces keep the VM, cold keeps ID and address; bad command" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sh", "-c", "echo gen0; sleep 60"]'
	qp_detached run --detach --bundle "$BUNDLE" "$ID"
	qpid=$(qemu_of "$ID")
	run qp replace "$ID" -- sh -c 'echo gen1; sleep 60'
	assert_status 0
	assert_eq "$(echo "$output" | jq -r .mode)" warm
	jq -e '.replace_ms > 0 and .gap_ms >= 0 and .stop_ms >= 0' <<<"$output" >/dev/null || flunk "timings: $output"
	assert_eq "$(qemu_of "$ID")" "$qpid" "the same VM"
	wait_for 100 grep -q gen1 "$TEST_DIR/pod.out"
	run qp exec "$ID" ps
	assert_status 0
	assert_contains "$output" "sleep 60"
	assert_eq "$(grep -c 'sleep 60' <<<"$output")" 1 "one workload"
	run -127 --separate-stderr qp replace "$ID" -- /no/such/cmd
	assert_qpod_error 127
	run qp delete --force "$ID"
	assert_status 0
	run --separate-stderr qp replace "$ID"
	assert_qpod_error
	assert_contains "$stderr" "does not exist"
}

@test "vm replace --cold: a new VM under the same ID" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "60"]'
	qp_detached run --detach --bundle "$BUNDLE" "$ID"
	qpid=$(qemu_of "$ID")
	# the new pod keeps the caller's stdio (as create does): not a pipe here
	qp replace --cold "$ID" </dev/null >"$TEST_DIR/replace.out" 2>&1 || flunk "replace --cold failed: $(cat "$TEST_DIR/replace.out")"
	assert_eq "$(head -1 "$TEST_DIR/replace.out" | jq -r .mode)" cold
	assert_eq "$(pod_field "$ID" status)" running
	[ "$(qemu_of "$ID")" != "$qpid" ] || flunk "cold replace kept the VM"
	[ ! -e "/proc/$qpid" ] || flunk "the old qemu $qpid is still there"
}

@test "vm pod under a subreaper (the shim's view): pid file = the monitor, its exit status = the workload's; exec -d = a relay with the exec's status" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sh", "-c", "sleep 2; exit 9"]'
	lifecycle_under_subreaper
	local pid epid
	pid=$(sed -n 1p "$TEST_DIR/pids")
	epid=$(sed -n 2p "$TEST_DIR/pids")
	assert_contains "$output" "cmd " "the command was reaped"
	assert_contains "$output" "$pid exit 9" "the monitor exits with the workload's status"
	assert_contains "$output" "$epid exit 6" "the exec relay exits with the exec's status"
	assert_contains "$output" "exec-out" "exec output"
	assert_eq "$(pod_field "$ID" status)" stopped
	qp delete "$ID"
}

@test "accel auto: a KVM that aborts QEMU is found by a probe boot (cached), TCG runs, and a forced kvm shows QEMU's error" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["echo", "ran"]'
	unset QPOD_ACCEL
	export QPOD_CACHE=$TEST_DIR/cache QPOD_QEMU=$BATS_TEST_DIRNAME/broken-kvm-qemu.sh
	mkdir -p "$QPOD_CACHE"
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || export QPOD_NO_KVM=1
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$output" ran "workload output"
	if [ -z "${QPOD_NO_KVM:-}" ]; then
		assert_contains "$stderr" "KVM is not usable here" "one line saying why"
		assert_contains "$stderr" "failed to set MSR" "QEMU's reason"
		assert_contains "$(cat "$QPOD_CACHE/kvm-probe")" "no qemu killed by signal 6" "cached answer"
	fi
	# the second pod uses the cached answer: no probe, no line
	qp_detached create --bundle "$BUNDLE" "$ID2"
	assert_eq "$(pod_field "$ID2" accel)" tcg "accel of the second pod"
	assert_eq "$(cat "$TEST_DIR/pod.err")" "" "no probe line the second time"
	qp delete --force "$ID2"
	if [ -z "${QPOD_NO_KVM:-}" ]; then
		run --separate-stderr qp run --accel kvm --mode vm --rm "$ROOTFS" -- true
		assert_qpod_error 125
		assert_contains "$stderr" "failed to set MSR" "QEMU's own error for a forced kvm"
	fi
}

@test "vm faults: a QEMU that never serves its channel (qpod made the socket): a clear error, no crash, and no state dir, process or lease left (bridge)" {
	printf '#!/bin/sh\nexec sleep 30\n' >"$TEST_DIR/sleeping-qemu"
	chmod +x "$TEST_DIR/sleeping-qemu"
	NS=qpvm$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	run --separate-stderr env QPOD_QEMU="$TEST_DIR/sleeping-qemu" QPOD_VM_HELLO_TIMEOUT_MS=1500 \
		nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" run --mode vm --net bridge --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "the VM did not say hello within 1500 ms"
	assert_eq "$(ls "$ROOT" | grep -v '^\.' || true)" "" "state dirs left"
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null)" "" "leases left"
	! pgrep -f "$TEST_DIR/sleeping-qemu" >/dev/null || flunk "the fake QEMU is still running"
}

@test "vm: the 9p rootfs is writable unless root.readonly, as a container's; kill --all of a stopped vm pod succeeds" {
	local rfs=$TEST_DIR/rootfs
	cp -a "$ROOTFS" "$rfs"
	make_bundle "$BUNDLE" ".root.path = \"$rfs\" | .root.readonly = false | .annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = false | .process.args = [\"sh\", \"-c\", \"echo from-guest >/root/written\"]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$(cat "$rfs/root/written")" from-guest "the guest's write, on the host"
	make_bundle "$BUNDLE" ".root.path = \"$rfs\" | .root.readonly = true | .annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = false | .process.args = [\"sh\", \"-c\", \"echo again >/root/written\"]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	[ "$status" -ne 0 ] || flunk "a write to a read-only root succeeded"
	assert_eq "$(cat "$rfs/root/written")" from-guest "a read-only root is not written"

	# containerd's exit handler: kill --all of a stopped pod (was a crash, 139)
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sh", "-c", "exit 2"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	wait_for 200 status_is "$ID" stopped
	run --separate-stderr qp kill --all "$ID" KILL
	assert_status 0
	run --separate-stderr qp kill "$ID" KILL
	assert_status 1
	assert_eq "$stderr" "qpod: kill: container not running"
	qp delete "$ID"
}

@test "vm: the spec's own mounts reach the guest: a directory bind (ro), a file bind, a tmpfs; others are named in a warning" {
	mkdir -p "$TEST_DIR/dir"
	echo in-dir >"$TEST_DIR/dir/f"
	echo the-hosts-file >"$TEST_DIR/hosts"
	make_bundle "$BUNDLE" ".annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = false
		| .process.args = [\"sh\", \"-c\", \"cat /data/f /etc/hosts; touch /data/x 2>/dev/null && echo dir-rw || echo dir-ro; echo t >/scratch/t && grep ' /scratch ' /proc/mounts; ls -a /dev | grep -c qpod-stage\"]
		| .mounts += [{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"$TEST_DIR/dir\", \"options\": [\"rbind\", \"ro\"]},
			{\"destination\": \"/etc/hosts\", \"type\": \"bind\", \"source\": \"$TEST_DIR/hosts\", \"options\": [\"bind\"]},
			{\"destination\": \"/scratch\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"size=1m\", \"nosuid\"]},
			{\"destination\": \"/weird\", \"type\": \"proc\", \"source\": \"proc\"}]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 1 # the workload's: its last command, grep -c, counted no match
	assert_eq "${lines[0]}" in-dir "the directory bind"
	assert_eq "${lines[1]}" the-hosts-file "the file bind"
	assert_eq "${lines[2]}" dir-ro "ro of the directory bind"
	assert_match "${lines[3]}" '^tmpfs /scratch tmpfs rw,nosuid,.*size=1024k' "the tmpfs"
	assert_eq "${lines[4]}" 0 "no staging mount left visible"
	assert_contains "$stderr" 'the mount on "/weird" is not applied inside the VM (proc)' "the warning"
	[ ! -e "$TEST_DIR/dir/x" ] || flunk "a write reached the read-only bind's source"
	assert_eq "$(ls "$ROOT" | grep -v '^\.' || true)" "" "state dirs left (with their staged copies)"
}

@test "vm: a 9p share takes shared writable mappings (cache=mmap), and the host sees what the guest wrote" {
	mkdir -p "$TEST_DIR/rw"
	echo old >"$TEST_DIR/rw/plain"
	make_bundle "$BUNDLE" ".annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = false
		| .process.args = [\"sh\", \"-c\", \"$HELPER mmapwrite /rw/mapped via-mmap; cat /rw/plain; echo via-write >/rw/plain\"]
		| .mounts += [{\"destination\": \"/rw\", \"type\": \"bind\", \"source\": \"$TEST_DIR/rw\", \"options\": [\"rbind\", \"rw\"]}]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "${lines[0]}" OK "mmap MAP_SHARED, write, msync in the guest"
	assert_eq "${lines[1]}" old "read(2) of a host file"
	assert_eq "$(cat "$TEST_DIR/rw/mapped")" via-mmap "the mapped write, on the host"
	assert_eq "$(cat "$TEST_DIR/rw/plain")" via-write "the write(2), on the host"
}

# The traditional-VM baseline builds its QEMU with qpod's own command line
# code (the pc machine profile of the same device table) and gets the pods'
# accel, memory and vCPUs: what it boots shows them.
@test "traditional-VM baseline: qpod's QEMU spawning with the pc profile, the given memory, vCPUs and accel" {
	local cache=${QPOD_CACHE:-/var/cache/qpod}
	"$REPO/tools/baseline-kernel.sh" >/dev/null || flunk "baseline kernel"
	run --separate-stderr timeout 300 "$QPOD_BUILD/tools/qpod-tradvm" -n 1 -A tcg -M 320M -c 2 \
		-k "$cache/baseline-kernel/current/vmlinuz" -m "$cache/baseline-kernel/current/modules" \
		-r "$ROOTFS" -i "$QPOD_BUILD/guest-init/qpod-init" -- /bin/sh -c 'grep MemTotal /proc/meminfo; nproc; cat /sys/devices/virtual/dmi/id/sys_vendor 2>/dev/null || echo none'
	assert_status 0
	local kb
	kb=$(awk '/^MemTotal:/ { print $2 }' <<<"$output")
	[ -n "$kb" ] && [ "$kb" -gt 280000 ] && [ "$kb" -le 327680 ] || flunk "MemTotal ${kb:-?} kB for -M 320M" "$output"
	assert_contains "$output" $'\n2\n' "nproc for -c 2"
	assert_contains "$output" QEMU "a pc machine (DMI vendor QEMU; microvm has no DMI)"
	run --separate-stderr "$QPOD_BUILD/tools/qpod-tradvm" -A hvf
	assert_status 2
	assert_contains "$stderr" "-A must be auto, kvm or tcg"
}
