#!/usr/bin/env bats
# tests/cli/vm_tty.bats — terminals of microVM pods (process.terminal), driven
# through real ptys (tests/cli/ptyrun.py): create + start with --console-socket
# (runc's protocol: the master arrives on the socket), typed input reaching
# the shell, `stty size` following a resize, ^C stopping a foreground sleep
# with the shell surviving, the exit status; a clone of a template.

load helpers

setup() { setup_vm; }

CONSOLE_HOLD=$BATS_TEST_DIRNAME/console-hold.py

# hold_console SOCKET: a console client that takes the terminal and never
# reads it (console-hold.py), its pid in $HOLDER (teardown kills it: the
# terminal's hangup)
hold_console() {
	"$CONSOLE_HOLD" "$1" >"$TEST_DIR/hold.out" 2>"$TEST_DIR/hold.err" 3>&- &
	HOLDER=$!
	BG_PIDS+=("$HOLDER")
	wait_for 200 test -S "$1"
}

# held_tty_pod ARGS_JSON: a running VM pod $ID of those args on a terminal
# whose client never reads it (hold_console)
held_tty_pod() {
	make_bundle "$BUNDLE" ".annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = true | .process.args = $1"
	hold_console "$TEST_DIR/console.sock"
	qp_detached create --bundle "$BUNDLE" --console-socket "$TEST_DIR/console.sock" "$ID"
	wait_for 200 grep -qx held "$TEST_DIR/hold.out"
	qp start "$ID"
}

tty_bundle() { # a VM pod running sh on a terminal
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = true | .process.args = ["sh"] | .process.env += ["PS1=qp-prompt$ "]'
}

@test "vm tty: create --console-socket, start: input reaches sh, stty size follows a resize, ^C stops a sleep, exit 3" {
	tty_bundle
	local sock=$TEST_DIR/console.sock
	# the terminal arrives during create (the pod's monitor keeps it)
	tty_steps 'qp-prompt$ ' 33x101 3
	"$PTYRUN" --timeout 120 --size 24x80 --console-socket "$sock" "${TTY_STEPS[@]}" \
		-- "$QPOD" --root "$ROOT" create --bundle "$BUNDLE" --console-socket "$sock" "$ID" \
		>"$TEST_DIR/tty.out" 2>"$TEST_DIR/tty.err" 3>&- &
	local drv=$!
	wait_for 1200 status_is "$ID" created
	qp start "$ID"
	wait "$drv" || flunk "ptyrun: $(cat "$TEST_DIR/tty.err")"
	assert_tty_session "$(cat "$TEST_DIR/tty.out")" "24 80" "33 101"
	wait_for 100 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "exited with status 3"
	qp delete "$ID"
}

@test "vm tty: exec -t --console-socket into a running pod: input, stty size and a resize, ^C, exit 5" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.args = ["sleep", "600"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	local sock=$TEST_DIR/exec.sock
	tty_steps 'qp-exec$ ' 40x120 5
	run "$PTYRUN" --timeout 120 --size 30x90 --console-socket "$sock" "${TTY_STEPS[@]}" \
		-- "$QPOD" --root "$ROOT" exec -t --console-socket "$sock" --env 'PS1=qp-exec$ ' "$ID" -- sh
	assert_status 5
	assert_tty_session "$output" "30 90" "40 120"
	# the pod runs on, and a plain exec still works
	run --separate-stderr qp exec "$ID" -- echo plain
	assert_status 0
	assert_eq "$output" plain
	qp delete --force "$ID"
}

@test "vm tty: qpod run -t: qpod's own terminal, raw while the pod runs and restored after" {
	check_run_tty vm
}

@test "vm tty: qpod exec -t without --console-socket: qpod's own terminal (also under script(1)), restored after" {
	check_exec_tty vm
}

@test "vm tty: a pod flooding its terminal still takes exec, exec -t and kill" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = true | .process.args = ["yes", "flood"]'
	local sock=$TEST_DIR/console.sock
	# the terminal's reader counts what it gets
	{ "$PTYRUN" --timeout 300 --console-socket "$sock" \
		-- "$QPOD" --root "$ROOT" create --bundle "$BUNDLE" --console-socket "$sock" "$ID" |
		wc -c >"$TEST_DIR/flood.bytes"; } 2>"$TEST_DIR/tty.err" 3>&- &
	local drv=$!
	wait_for 1200 status_is "$ID" created
	qp start "$ID"
	run --separate-stderr qp exec "$ID" -- sh -c 'pidof yes >/dev/null && echo flooding'
	assert_status 0
	assert_eq "$output" flooding "an exec while yes floods the terminal"
	local esock=$TEST_DIR/exec.sock
	run "$PTYRUN" --timeout 120 --console-socket "$esock" --send-after 'qp-exec$ ' 'exit 6\r' \
		-- "$QPOD" --root "$ROOT" exec -t --console-socket "$esock" --env 'PS1=qp-exec$ ' "$ID" -- sh
	assert_status 6
	qp kill "$ID" KILL
	wait_for 600 status_is "$ID" stopped
	wait "$drv" || flunk "ptyrun: $(cat "$TEST_DIR/tty.err")"
	[ "$(cat "$TEST_DIR/flood.bytes")" -gt 100000 ] || flunk "the flood did not reach the terminal: $(cat "$TEST_DIR/flood.bytes") bytes"
	qp delete "$ID"
}

@test "vm tty: a console client that never reads its terminal does not stop exec or kill (yes floods it)" {
	held_tty_pod '["yes", "flood"]'
	# (a stalled relay would never answer: timeout bounds each command)
	run --separate-stderr timeout 120 "$QPOD" --root "$ROOT" exec "$ID" -- sh -c 'pidof yes >/dev/null && echo flooding'
	assert_status 0
	assert_eq "$output" flooding "an exec while yes floods a terminal nobody reads"
	run --separate-stderr timeout 60 "$QPOD" --root "$ROOT" kill "$ID" KILL
	assert_status 0
	wait_for 600 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "exited with status 137"
	qp delete "$ID"
}

@test "vm tty: the console client closing its terminal hangs the guest's up: SIGHUP to the workload and to an exec -t" {
	held_tty_pod '["sh", "-c", "trap \"exit 9\" HUP; while :; do sleep 1; done"]'
	# an exec -t whose client is another holder
	local esock=$TEST_DIR/exec.sock first=$HOLDER
	hold_console "$esock"
	mv "$TEST_DIR/hold.out" "$TEST_DIR/hold-exec.out"
	(exec timeout -k 5 120 "$QPOD" --root "$ROOT" exec -t --console-socket "$esock" "$ID" -- sh -c 'trap "exit 8" HUP; touch /tmp/hup-trap-set; while :; do sleep 1; done') \
		</dev/null >"$TEST_DIR/exec.out" 2>&1 3>&- &
	local ex=$!
	wait_for 600 grep -qx held "$TEST_DIR/hold-exec.out"
	# its trap is set (a hangup before would kill it: 129, not the race the
	# test is about)
	wait_for 600 "$QPOD" --root "$ROOT" exec "$ID" -- test -e /tmp/hup-trap-set
	# the exec's client closes its master: the exec's shell gets SIGHUP
	kill -TERM "$HOLDER"
	local code=0
	wait "$ex" || code=$?
	assert_eq "$code" 8 "the exec's status after its terminal's hangup ($(cat "$TEST_DIR/exec.out"))"
	status_is "$ID" running || flunk "the pod ended with the exec's terminal"
	# the pod's client closes its master: the workload gets SIGHUP
	kill -TERM "$first"
	wait_for 600 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "exited with status 9"
	qp delete "$ID"
}

@test "vm tty: exec --process with terminal true (containerd's shim's form)" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.args = ["sleep", "600"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	jq '.process | .terminal = true | .args = ["sh", "-c", "tty && stty size; exit 7"]' "$BUNDLE/config.json" >"$TEST_DIR/process.json"
	local sock=$TEST_DIR/exec.sock
	run "$PTYRUN" --timeout 120 --size 27x95 --console-socket "$sock" \
		-- "$QPOD" --root "$ROOT" exec --process "$TEST_DIR/process.json" --console-socket "$sock" "$ID"
	assert_status 7
	output=${output//$'\r'/}
	assert_match "$output" $'/dev/pts/[0-9]+\n27 95' "tty and size"
	qp delete --force "$ID"
}
