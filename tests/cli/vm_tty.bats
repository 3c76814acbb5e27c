#!/usr/bin/env bats
# tests/cli/vm_tty.bats — terminals of microVM pods (process.terminal), driven
# through real ptys (tests/cli/ptyrun.py): create + start with --console-socket
# (runc's protocol: the master arrives on the socket), typed input reaching
# the shell, `stty size` following a resize, ^C stopping a foreground sleep
# with the shell surviving, the exit status; a clone of a template.

load helpers

PTYRUN=$BATS_TEST_DIRNAME/ptyrun.py

setup() {
	need_vm
	setup_common
	vm_env
}

teardown() {
	teardown_common
}

tty_bundle() { # a VM pod running sh on a terminal
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = true | .process.args = ["sh"] | .process.env += ["PS1=qp-prompt$ "]'
}

@test "vm tty: create --console-socket, start: input reaches sh, stty size follows a resize, ^C stops a sleep, exit 3" {
	tty_bundle
	local sock=$TEST_DIR/console.sock
	# the terminal arrives during create (the pod's monitor keeps it)
	"$PTYRUN" --timeout 120 --size 24x80 --console-socket "$sock" \
		--send-after 'qp-prompt$ ' 'stty size; tty\r' \
		--resize-after '/dev/pts/' 33x101 \
		--send-after 'qp-prompt$ ' 'sleep 1; stty size\r' \
		--send-after '33 101' 'echo sl""eeping; sleep 600\r' \
		--send-after 'sleeping' '\x03' \
		--send-after 'qp-prompt$ ' 'echo survived-$((40+2)); exit 3\r' \
		-- "$QPOD" --root "$ROOT" create --bundle "$BUNDLE" --console-socket "$sock" "$ID" \
		>"$TEST_DIR/tty.out" 2>"$TEST_DIR/tty.err" &
	local drv=$!
	wait_for 1200 status_is "$ID" created
	qp start "$ID"
	wait "$drv" || flunk "ptyrun: $(cat "$TEST_DIR/tty.err")"
	local out
	out=$(tr -d '\r' <"$TEST_DIR/tty.out")
	assert_contains "$out" "24 80" "the first size"
	assert_match "$out" '/dev/pts/[0-9]+' "a terminal in the guest"
	assert_contains "$out" "33 101" "the size after the resize"
	assert_contains "$out" "survived-42" "the shell survived ^C"
	wait_for 100 status_is "$ID" stopped
	assert_contains "$(pod_field "$ID" stop_reason)" "exited with status 3"
	qp delete "$ID"
}
