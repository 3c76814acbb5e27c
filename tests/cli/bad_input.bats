#!/usr/bin/env bats
# tests/cli/bad_input.bats — hostile and broken input: malformed, truncated,
# mistyped and deeply nested config.json, unsupported ociVersion, bad pod
# IDs, bad rootfs, missing commands, ID conflicts and races, unknown pods.
# Each case asserts the exit status and ONE stderr line "qpod: ..."; the
# teardown asserts that nothing was left behind.

load helpers

# create_fails [STATUS]: `qpod create $ID --bundle $BUNDLE` must fail as
# qpod (125 by default) and leave no pod.
create_fails() {
	run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
	assert_qpod_error "${1:-125}"
	run --separate-stderr qp state "$ID"
	[ "$status" -ne 0 ] || flunk "a failed create left pod $ID behind"
}

@test "malformed JSON" {
	mkdir -p "$BUNDLE"
	echo '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	create_fails
	echo 'not json at all' >"$BUNDLE/config.json"
	create_fails
	printf '' >"$BUNDLE/config.json"
	create_fails
	printf '{"ociVersion": "1.0.2"}\0garbage' >"$BUNDLE/config.json"
	create_fails
}

@test "truncated config.json" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	local size
	size=$(stat -c %s "$BUNDLE/config.default.json")
	head -c $((size / 2)) "$BUNDLE/config.default.json" >"$BUNDLE/config.json"
	create_fails
	head -c $((size - 2)) "$BUNDLE/config.default.json" >"$BUNDLE/config.json"
	create_fails
}

@test "missing config.json and missing bundle" {
	mkdir -p "$BUNDLE"
	create_fails
	run --separate-stderr qp create "$ID" --bundle "$TEST_DIR/no-such-bundle"
	assert_qpod_error 125
}

@test "wrong types in config.json" {
	local filter
	for filter in '.process.args = "sh"' '.process.args = [1, 2]' '.root = 5' '.root.path = []' \
		'.process.user.uid = "zero"' '.process.user.uid = -1' '.process.env = {"A": "b"}' \
		'.linux.resources = {"memory": {"limit": "big"}}' '.hostname = 7' \
		'.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": "x", "hard": 1}]' \
		'.process.rlimits = [{"type": "RLIMIT_NOSUCH", "soft": 1, "hard": 1}]' \
		'.process.capabilities.bounding = ["CAP_NO_SUCH_CAP"]' '.mounts = {}' \
		'.linux.namespaces = [{"type": "no-such-ns"}]' '.process.terminal = "yes"'; do
		make_bundle "$BUNDLE" "$(helper_args true) | $filter"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		[ "$status" -eq 125 ] || flunk "$filter: exit status $status, expected 125" "$stderr"
		assert_qpod_error 125
	done
}

# qpod's own options are typed in one place: a bad value or an unknown
# qpod.* key is refused at create, before any VM or namespace exists
@test "bad qpod.* annotations are refused at create, naming the annotation" {
	local case_i
	local -a filters=(
		'.annotations["qpod.vm.accel"] = "hvf"'
		'.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.firmware"] = "fw.bin"'
		'.annotations["qpod.vcpus"] = "0"'
		'.annotations["qpod.net.ip"] = "10.1.2.3"'
		'.annotations["qpod.net"] = "bridge" | .annotations["qpod.net.subnet"] = "10.0.0.0"'
		'.annotations["qpod.vm.acel"] = "tcg"'
		'.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.backend"] = "xen"'
		'.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.libvirt.uri"] = "qemu:///system\n"'
	) wants=(
		'qpod.vm.accel must be auto, kvm or tcg'
		'qpod.vm.firmware must be qpod, qboot, seabios or an absolute path'
		'qpod.vcpus must be a number in 1..255'
		'need qpod.net=bridge'
		'qpod.net.subnet must be an IPv4 subnet'
		'unknown qpod option "qpod.vm.acel"'
		'qpod.vm.backend must be qemu or libvirt'
		'qpod.vm.libvirt.uri must be a libvirt URI of 1..1024 printable bytes'
	)
	for case_i in "${!filters[@]}"; do
		rm -rf "$BUNDLE"
		make_bundle "$BUNDLE" "$(helper_args true) | ${filters[case_i]}"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "${wants[case_i]}" "${filters[case_i]}"
		[ ! -e "$ROOT/$ID" ] || flunk "${filters[case_i]}: a refused create left $ROOT/$ID"
	done
}

@test "missing process.args, empty process.args, missing root" {
	make_bundle "$BUNDLE" 'del(.process.args)'
	create_fails
	make_bundle "$BUNDLE" '.process.args = []'
	create_fails
	make_bundle "$BUNDLE" "$(helper_args true) | del(.root)"
	create_fails
}

@test "unsupported ociVersion 0.1.0" {
	make_bundle "$BUNDLE" "$(helper_args true) | .ociVersion = \"0.1.0\""
	create_fails
}

@test "deeply nested and huge config.json do not crash qpod" {
	mkdir -p "$BUNDLE"
	{
		printf '{"ociVersion": "1.0.2", "x": '
		head -c 200000 /dev/zero | tr '\0' '['
		head -c 200000 /dev/zero | tr '\0' ']'
		printf '}'
	} >"$BUNDLE/config.json"
	create_fails
	# a valid spec padded with a 64 MiB unknown field: input must be bounded
	make_bundle "$BUNDLE" "$(helper_args true)"
	{
		printf '{"qpodTestPadding": "'
		head -c $((64 * 1024 * 1024)) /dev/zero | tr '\0' 'a'
		printf '",'
		tail -c +2 "$BUNDLE/config.json"
	} >"$BUNDLE/config.big.json"
	mv "$BUNDLE/config.big.json" "$BUNDLE/config.json"
	create_fails
}

@test "bad pod IDs" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	local id long
	long=$(head -c 256 /dev/zero | tr '\0' 'x') # a file name holds 255 bytes
	for id in "" "a/b" ".." "." $'bad\tid' "$long" "../escape" "-dash" "a b" "new"$'\n'"line"; do
		run --separate-stderr qp create "$id" --bundle "$BUNDLE"
		assert_qpod_error 125
		run --separate-stderr qp run --rm --name "$id" "$ROOTFS" -- "$HELPER" true
		assert_qpod_error 125
	done
	run --separate-stderr qp create "$long" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_eq "$stderr" "qpod: create: invalid pod ID: longer than 255 bytes" "a 256-byte ID, refused without echoing it"
	assert_eq "$(ls -A "$ROOT" 2>/dev/null | grep -v '^\.')" "" "entries in the state root"
	[ ! -e "$TEST_DIR/escape" ] || flunk "an ID escaped the state root"
}

@test "rootfs missing, not a directory, or a symlink to /" {
	make_bundle "$BUNDLE" "$(helper_args true) | .root.path = \"$TEST_DIR/no-such-rootfs\""
	create_fails
	touch "$TEST_DIR/file"
	make_bundle "$BUNDLE" "$(helper_args true) | .root.path = \"$TEST_DIR/file\""
	create_fails
	ln -s / "$TEST_DIR/rootlink"
	make_bundle "$BUNDLE" "$(helper_args true) | .root.path = \"$TEST_DIR/rootlink\""
	create_fails
	make_bundle "$BUNDLE" "$(helper_args true) | .root.path = \"/\""
	create_fails
	run --separate-stderr qp run --rm "$TEST_DIR/rootlink" -- /bin/true
	assert_qpod_error 125
}

@test "command not found in the rootfs: 127; not executable: 126" {
	run --separate-stderr qp run --rm "$ROOTFS" -- /bin/no-such-command
	assert_qpod_error 127
	# runc's texts, which podman matches to answer 127
	assert_contains "${stderr_lines[0]}" 'stat /bin/no-such-command: no such file or directory' "stderr"
	run --separate-stderr qp run --rm "$ROOTFS" -- no-such-command-in-path
	assert_qpod_error 127
	assert_contains "${stderr_lines[0]}" 'executable file not found in $PATH' "stderr"
	run --separate-stderr qp run --rm "$ROOTFS" -- /etc/passwd
	assert_qpod_error 126
	make_bundle "$BUNDLE" '.process.args = ["/bin/no-such-command"]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_qpod_error 127
}

@test "ID already in use" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	local pid
	pid=$(pod_field "$ID" pid)
	run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- "$HELPER" true
	assert_qpod_error 125
	assert_eq "$(pod_field "$ID" status)" created "status of the first pod"
	assert_eq "$(pod_field "$ID" pid)" "$pid" "pid of the first pod"
	qp delete --force "$ID"
}

@test "delete of a running pod without --force" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr qp delete "$ID"
	assert_qpod_error 125
	assert_eq "$(pod_field "$ID" status)" running "status"
	qp delete --force "$ID"
}

@test "two concurrent creates of one ID: exactly one succeeds" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	local round a b ok
	for round in 1 2 3; do
		qp create "$ID" --bundle "$BUNDLE" >/dev/null 2>"$TEST_DIR/a.err" 3>&- &
		a=$!
		qp create "$ID" --bundle "$BUNDLE" >/dev/null 2>"$TEST_DIR/b.err" 3>&- &
		b=$!
		ok=0
		wait "$a" && ok=$((ok + 1))
		wait "$b" && ok=$((ok + 1))
		assert_eq "$ok" 1 "round $round: successful creates"
		assert_eq "$(pod_field "$ID" status)" created "round $round: status"
		local e
		e=$(cat "$TEST_DIR/a.err" "$TEST_DIR/b.err")
		assert_match "$e" '^qpod: [^'$'\n'']+$' "round $round: stderr of the loser"
		qp delete --force "$ID"
	done
}

@test "unknown pod: kill, state, start, delete, exec, ps" {
	local cmd
	for cmd in kill state start delete ps; do
		run --separate-stderr qp $cmd no-such-pod
		assert_qpod_error 125
		assert_contains "$stderr" "does not exist" "$cmd of an unknown pod"
	done
	# runc: delete --force of an unknown pod succeeds, silently (podman
	# runs it after every failed create)
	run --separate-stderr qp delete --force no-such-pod
	assert_status 0
	assert_eq "$stderr" "" "delete --force of an unknown pod"
	run --separate-stderr qp exec no-such-pod -- /bin/true
	assert_qpod_error 125
	run --separate-stderr qp kill no-such-pod KILL
	assert_qpod_error 125
}

@test "missing and extra arguments" {
	local cmd
	for cmd in create start state kill delete ps exec "state a b" "start a b" "delete a b"; do
		# shellcheck disable=SC2086
		run --separate-stderr qp $cmd
		assert_qpod_error 125
	done
	cd "$TEST_DIR" # no config.json here: the default bundle "." is empty
	run --separate-stderr qp create "$ID"
	assert_qpod_error 125
}

@test "a state root that is a file" {
	touch "$TEST_DIR/rootfile"
	run --separate-stderr "$QPOD" --root "$TEST_DIR/rootfile" list
	assert_qpod_error 125
	rm -f "$TEST_DIR/rootfile"
}

@test "options of the ROOTFS form given with a bundle are refused, not ignored; create --help is create's" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	local o
	for o in "--memory 64M" "--hostname h" "--rm" "--name other" "-e A=B" "--net bridge" "--pids 5" "--read-only"; do
		# shellcheck disable=SC2086
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE" $o
		assert_qpod_error 125
		assert_contains "$stderr" "ROOTFS form" "create with $o"
	done
	assert_eq "$(qp list --quiet)" "" "pods left"
	run --separate-stderr "$QPOD" create --help
	assert_status 0
	assert_match "${lines[0]}" '^Usage: qpod create ' "create --help"
}

@test "gc removes only what qpod made: a foreign directory in the root survives; an abandoned claim goes" {
	mkdir -p "$ROOT/important/sub" "$ROOT/alsoforeign"
	echo precious >"$ROOT/important/sub/data.txt"
	# what a qpod killed mid-create leaves: a marked dir with no state
	mkdir -p "$ROOT/abandoned" "$ROOT/.claim-1-0"
	touch "$ROOT/abandoned/.qpod-pod" "$ROOT/.claim-1-0/.qpod-pod"
	run --separate-stderr qp gc
	assert_status 0
	assert_eq "$(cat "$ROOT/important/sub/data.txt")" precious "a foreign directory's data"
	[ -d "$ROOT/alsoforeign" ] || flunk "gc removed a directory qpod did not make"
	[ ! -e "$ROOT/abandoned" ] || flunk "the abandoned pod dir is still there"
	[ ! -e "$ROOT/.claim-1-0" ] || flunk "the abandoned claim is still there"
	assert_contains "$output" "removed 2 abandoned pod(s)"
	rm -rf "$ROOT/important" "$ROOT/alsoforeign"
}

@test "an option of the other mode is refused, never ignored: vm options on a container pod, --init on a vm pod" {
	local args
	for args in "--vcpus 2" "--boot cold" "--accel tcg" "--firmware seabios" "--vm-backend qemu"; do
		# shellcheck disable=SC2086 # the flag and its value
		run --separate-stderr qp run --rm $args "$ROOTFS" -- true
		assert_qpod_error 125
		assert_contains "$stderr" "is not an option of container pods" "$args"
	done
	make_bundle "$BUNDLE" '.process.terminal = false | .process.args = ["true"] | .annotations["qpod.vm.accel"] = "tcg"'
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_contains "$stderr" "qpod.vm.accel is not an option of container pods"
	[ ! -e "$ROOT/$ID" ] || flunk "state left"
	run --separate-stderr qp run --rm --mode vm --init "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "qpod.init is not an option of vm pods"
}
