#!/usr/bin/env bats
# tests/cli/containerd.bats — containerd as a real client of qpod: a private
# containerd 1.6 (its own config, root, state and socket under a mktemp -d
# directory, the CRI plugin disabled) runs a busybox image built here from
# the test rootfs (an OCI image tarball, imported; no registry) through ctr
# and the runc v2 shim with `--runc-binary qpod`, so qpod gets runc's command
# line: --root/--log/--log-format json, create --bundle --pid-file
# [--console-socket], start, state, kill [--all], delete [--force], exec
# --process --detach --pid-file [--console-socket], pause, resume.
#
# Each scenario runs in both modes: container, and microVM (the OCI
# annotation qpod.mode=vm, `ctr run --annotation`). Every test's teardown
# deletes its containers through ctr and asserts that nothing of it is left
# (qpod state, processes, shims and their sockets, mounts, cgroups); the
# last test stops containerd and asserts the same for the whole file.

load helpers
load containerd_helpers

setup_file() {
	need_containerd
	cd_setup_dir
	{
		cd_config_head '# the runc v2 shim through ctr only: the CRI plugin is cri.bats'"'"' subject
disabled_plugins = ["io.containerd.grpc.v1.cri"]'
	} >"$CD_CONFIG"
	mk_oci_image "$ROOTFS" "$CD_DIR/busybox.tar" "$IMAGE"
	cd_start
	c images import "$CD_DIR/busybox.tar" >/dev/null
}

teardown_file() {
	cd_teardown_file
}

setup() {
	setup_common
	# qpod's state: the shim runs qpod --root <runc-root>/<namespace>
	QROOT=$CD_DIR/qpod/t$BATS_TEST_NUMBER
	ROOT=$QROOT/$CD_NS
	BUNDLE_DIR=$CD_DIR/state/io.containerd.runtime.v2.task/$CD_NS
}

teardown() {
	local id rc=0
	for id in $(c containers ls -q 2>/dev/null | grep "^$PREFIX"); do
		ctr_remove "$CD_NS" "$id" || rc=1
	done
	[ ! -d "$ROOT/.spares" ] || "$QPOD" --root "$ROOT" spares drain >/dev/null || rc=1
	teardown_common || rc=1
	no_leftovers cd_test_leftovers || rc=1
	return $rc
}

# ---- helpers ----------------------------------------------------------------

need_mode() { # MODE: skip a vm test where no microVM can run
	if [ "$1" = vm ]; then need_vm; fi
}

# the ctr run options for qpod in MODE
qpod_opts() {
	echo --runc-binary "$QPOD" --runc-root "$QROOT"
	[ "$1" = vm ] && echo --annotation qpod.mode=vm
	return 0
}

# ctr_run MODE [CTR-RUN-OPTIONS...] -- ARGS...: ctr run of $IMAGE as $ID
ctr_run() {
	local mode=$1 opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	record_shim "$CD_NS" "$ID"
	# shellcheck disable=SC2046
	c run --fifo-dir "$CD_DIR/fifo" "${opts[@]}" $(qpod_opts "$mode") "$IMAGE" "$ID" "$@"
}

task_status() { # ID: the STATUS column of `ctr task ls`
	c task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'
}

task_pid() {
	c task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'
}

task_status_is() { [ "$(task_status "$1")" = "$2" ]; }

# the kernel release seen inside pod ID: the host's in a container, the
# guest kernel's in a microVM
assert_mode_kernel() { # MODE RELEASE
	if [ "$1" = vm ]; then
		[ "$2" != "$(uname -r)" ] || flunk "uname -r in a vm pod is the host's ($2)"
	else
		assert_eq "$2" "$(uname -r)" "uname -r in a container pod"
	fi
}

# a detached workload that marks itself ready and stops on SIGTERM with 7
run_detached() { # MODE
	run --separate-stderr ctr_run "$1" -d -- sh -c \
		'trap "echo got-term; exit 7" TERM; echo ready >/tmp/ready; while :; do sleep 0.1; done'
	assert_status 0
	wait_for 200 task_status_is "$ID" RUNNING
}

# ---- the scenarios, each for both modes ----------------------------------------

scenario_run() { # MODE
	need_mode "$1"
	run --separate-stderr ctr_run "$1" --rm -- sh -c 'echo "out $(uname -r)"; echo err >&2; exit 3' </dev/null
	assert_status 3
	assert_match "$output" '^out [^ ]+$' "stdout"
	assert_mode_kernel "$1" "${output#out }"
	assert_eq "$stderr" err "stderr"
	run c containers ls -q
	assert_status 0
	assert_not_contains "$output" "$ID" "containers after run --rm"
	[ ! -e "$ROOT/$ID" ] || flunk "qpod state of $ID left after run --rm: $(ls "$ROOT")"
}

scenario_run_tty() { # MODE: ctr run -t: create --console-socket
	need_mode "$1"
	record_shim "$CD_NS" "$ID"
	# ctr needs a terminal of its own: script(1) gives it one. timeout(1)
	# stays outside script: inside, it would put ctr in a background process
	# group of that terminal, and ctr's raw-mode tcsetattr stops on SIGTTOU
	run timeout -k 5 60 script -qefc "ctr -a $CD_SOCK -n $CD_NS run --fifo-dir $CD_DIR/fifo --rm -t $(qpod_opts "$1" | tr '\n' ' ') \
		$IMAGE $ID sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-ttys; exit 4'" /dev/null </dev/null
	assert_status 4
	assert_match "$output" '/dev/pts/[0-9]+' "tty"
	assert_contains "$output" both-ttys "stdin and stdout are the terminal"
}

scenario_detached() { # MODE: run -d, task exec, task kill, task delete
	need_mode "$1"
	run_detached "$1"
	local pid
	pid=$(task_pid "$ID")
	assert_match "$pid" '^[1-9][0-9]*$' "task pid"
	kill -0 "$pid" || flunk "task pid $pid is not alive"
	assert_eq "$(pod_field "$ID" status)" running "qpod state"
	assert_eq "$(pod_field "$ID" mode)" "$1" "qpod mode"
	# containerd's VM pods, with their bind mounts, are template clones
	[ "$1" != vm ] || assert_eq "$(qp state "$ID" | jq '.timeline.restore > 0')" true "a clone (boot auto)"

	run --separate-stderr c task exec --fifo-dir "$CD_DIR/fifo" --exec-id e1 "$ID" sh -c 'cat /tmp/ready; echo exec-err >&2; exit 5' </dev/null
	assert_status 5
	assert_eq "$output" ready "exec stdout"
	assert_eq "$stderr" exec-err "exec stderr"
	# the exec runs beside the workload, in the same pod
	run --separate-stderr c task exec --fifo-dir "$CD_DIR/fifo" --exec-id e2 "$ID" sh -c 'ps; uname -r' </dev/null
	assert_status 0
	assert_contains "$output" got-term "ps in the pod shows the workload"
	assert_mode_kernel "$1" "${lines[-1]}"
	run --separate-stderr c task exec --fifo-dir "$CD_DIR/fifo" --exec-id e3 "$ID" /no/such/binary </dev/null
	[ "$status" -ne 0 ] || flunk "exec of a missing binary succeeded"
	assert_eq "$(task_status "$ID")" RUNNING "the task after the execs"

	run --separate-stderr c task kill "$ID"
	assert_status 0
	wait_for 200 task_status_is "$ID" STOPPED
	run --separate-stderr c task delete "$ID"
	assert_status 0
	assert_contains "$stderr" "exit code 7" "task delete reports the exit status of the TERM trap"
	run c task ls
	assert_status 0
	assert_not_contains "$output" "$ID" "tasks after delete"
	[ ! -e "$ROOT/$ID" ] || flunk "qpod state of $ID left after task delete"
	run c containers rm "$ID"
	assert_status 0
}

scenario_exec_tty() { # MODE: task exec -t (exec --tty --console-socket)
	need_mode "$1"
	run_detached "$1"
	run timeout -k 5 60 script -qefc "ctr -a $CD_SOCK -n $CD_NS task exec --fifo-dir $CD_DIR/fifo -t --exec-id t1 $ID \
		sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-ttys; exit 6'" /dev/null </dev/null
	assert_status 6
	assert_match "$output" '/dev/pts/[0-9]+' "tty"
	assert_contains "$output" both-ttys "stdin and stdout are the terminal"
	assert_eq "$(task_status "$ID")" RUNNING "the task after exec -t"
}

scenario_run_tty_session() { # MODE: ctr run -t of sh, typed at (ptyrun.py: the terminal ctr takes)
	need_mode "$1"
	record_shim "$CD_NS" "$ID"
	tty_steps 'qp-ctr$ ' 33x101 3
	# shellcheck disable=SC2046
	run "$PTYRUN" --timeout 120 --size 24x80 "${TTY_STEPS[@]}" -- ctr -a "$CD_SOCK" -n "$CD_NS" run \
		--fifo-dir "$CD_DIR/fifo" --rm -t --env 'PS1=qp-ctr$ ' $(qpod_opts "$1") "$IMAGE" "$ID" sh 3>&-
	assert_status 3
	assert_tty_session "$output" "24 80" "33 101"
}

scenario_kill_exited() { # MODE: the task exits by itself; kill, then delete
	need_mode "$1"
	run --separate-stderr ctr_run "$1" -d -- sh -c 'exit 9'
	assert_status 0
	wait_for 200 task_status_is "$ID" STOPPED
	# containerd answers a kill of an exited task itself; the delete runs
	# qpod delete on a stopped pod
	run --separate-stderr c task kill "$ID"
	[ "$status" -ne 0 ] || flunk "kill of an exited task succeeded"
	assert_contains "$stderr" "not found" "kill of an exited task"
	run --separate-stderr c task delete "$ID"
	assert_status 0
	assert_contains "$stderr" "exit code 9"
	[ ! -e "$ROOT/$ID" ] || flunk "qpod state of $ID left after task delete"
}

scenario_pause() { # MODE: task pause / resume
	need_mode "$1"
	# a counter on stdout, which the shim writes to a file on the host
	local log=$TEST_DIR/count.log a b
	run --separate-stderr ctr_run "$1" -d --log-uri "file://$log" -- sh -c \
		'i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done'
	assert_status 0
	wait_for 200 task_status_is "$ID" RUNNING
	wait_for 400 test -s "$log"

	run --separate-stderr c task pause "$ID"
	assert_status 0
	assert_eq "$(task_status "$ID")" PAUSED "task status after pause"
	assert_eq "$(pod_field "$ID" status)" paused "qpod state after pause"
	sleep 0.3 # a line being written as the pause came
	a=$(tail -n 1 "$log")
	sleep 1
	b=$(tail -n 1 "$log")
	assert_eq "$b" "$a" "the counter of a paused pod"

	run --separate-stderr c task resume "$ID"
	assert_status 0
	assert_eq "$(task_status "$ID")" RUNNING "task status after resume"
	assert_eq "$(pod_field "$ID" status)" running "qpod state after resume"
	wait_for 200 sh -c "[ \"\$(tail -n 1 '$log')\" -gt '$b' ]"
}

scenario_metrics() { # MODE: task metrics from the pod's cgroup
	need_mode "$1"
	run_detached "$1"
	local pid
	pid=$(task_pid "$ID")
	# the task runs in the cgroup ctr asked for (cgroupsPath /NAMESPACE/ID)
	grep -qE ":/$CD_NS/$ID\$" "/proc/$pid/cgroup" ||
		flunk "task pid $pid is not in cgroup /$CD_NS/$ID:" "$(cat "/proc/$pid/cgroup")"
	run --separate-stderr c task metrics --format json "$ID"
	assert_status 0
	# cgroup v1 (hybrid hosts) and v2 metrics
	jq -e '((.memory.usage.usage // .memory.usage // 0) > 0)
		and ((.pids.current // 0) >= 1)
		and ((.cpu.usage.total // .cpu.usage_usec // 0) > 0)' <<<"$output" >/dev/null ||
		flunk "metrics without memory, pids and cpu usage:" "$output"
	run --separate-stderr c task metrics "$ID"
	assert_status 0
	assert_contains "$output" "$ID" "metrics table"
}

# ---- tests --------------------------------------------------------------------------

@test "containerd: private instance up, CRI plugin disabled, image imported" {
	run c version
	assert_status 0
	assert_contains "$output" "Server:"
	run c plugins ls
	assert_status 0
	[ -z "$(awk '$2 == "cri"' <<<"$output")" ] || flunk "the cri plugin is loaded:" "$output"
	run c images ls -q
	assert_status 0
	assert_eq "$output" "$IMAGE" "images"
	[ "$(realpath "$(awk -F'"' '/^root/ { print $2 }' "$CD_CONFIG")")" = "$(realpath "$CD_DIR/root")" ] ||
		flunk "containerd root is not private"
}

@test "ctr run: output, exit status, --rm (container)" { scenario_run container; }
@test "ctr run: output, exit status, --rm (vm)" { scenario_run vm; }
@test "ctr run -t: the workload on a terminal (container)" { scenario_run_tty container; }
@test "ctr run of a vm pod takes a free spare made in the shim's qpod root (qpod spares fill), and the spare goes with the task" {
	need_vm
	"$QPOD" --root "$ROOT" spares fill --no-refill >/dev/null || flunk "spares fill"
	local qemu
	qemu=$("$QPOD" --root "$ROOT" spares list --format json | jq -r '.[0].qemu_pid')
	assert_match "$qemu" '^[1-9][0-9]*$' "the spare's QEMU"
	run --separate-stderr ctr_run vm --rm -- sh -c 'echo "out $(uname -r)"; exit 3' </dev/null
	assert_status 3
	assert_match "$output" '^out [^ ]+$' "stdout"
	assert_mode_kernel vm "${output#out }"
	# taken: its QEMU ran the task and ended with it (a spare not taken
	# stays listed as free, its QEMU alive)
	wait_for 40 test ! -e "/proc/$qemu"
	assert_eq "$("$QPOD" --root "$ROOT" spares list --format json)" "[]" "spares after the task"
}

@test "ctr run -t: the workload on a terminal (vm)" { scenario_run_tty vm; }
@test "ctr run -t of sh: typed input, stty size follows a resize, ^C stops a sleep, exit 3 (container)" { scenario_run_tty_session container; }
@test "ctr run -t of sh: typed input, stty size follows a resize, ^C stops a sleep, exit 3 (vm)" { scenario_run_tty_session vm; }
@test "ctr run -d, task exec, task kill, task delete (container)" { scenario_detached container; }
@test "ctr run -d, task exec, task kill, task delete (vm)" { scenario_detached vm; }
@test "ctr task exec -t (container)" { scenario_exec_tty container; }
@test "ctr task exec -t (vm)" { scenario_exec_tty vm; }
@test "ctr: a task that exited by itself: kill, delete (container)" { scenario_kill_exited container; }
@test "ctr: a task that exited by itself: kill, delete (vm)" { scenario_kill_exited vm; }
@test "ctr task pause, resume (container)" { scenario_pause container; }
@test "ctr task pause, resume (vm)" { scenario_pause vm; }
@test "ctr task metrics (container)" { scenario_metrics container; }
@test "ctr task metrics (vm)" { scenario_metrics vm; }

@test "containerd stops on SIGTERM and leaves nothing behind" {
	run cd_cleanup
	assert_status 0
	assert_eq "$output" "" "cleanup found"
	! alive "$CD_PID" || flunk "containerd $CD_PID still runs"
	[ ! -e "$CD_DIR" ] || flunk "$CD_DIR not removed"
}
