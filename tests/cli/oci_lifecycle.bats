#!/usr/bin/env bats
# tests/cli/oci_lifecycle.bats — the OCI runtime command line on a bundle:
# spec, features, create/start/state/list/ps/kill/delete, pid file, run
# (foreground and --detach) with exit statuses and signal forwarding, exec.

load helpers

@test "spec prints a default config.json" {
	run --separate-stderr "$QPOD" spec
	assert_status 0
	jq -e '.ociVersion and .process.terminal == false and .process.args == ["sh"]
		and .root.path == "rootfs" and (.linux.seccomp.syscalls | length) > 0' <<<"$output" ||
		flunk "unexpected default spec:" "$output"
}

@test "features is true: every mount option and namespace it lists works" {
	run --separate-stderr "$QPOD" features
	assert_status 0
	local features=$output o ns src=$TEST_DIR/src
	jq -e '.potentiallyUnsafeConfigAnnotations == ["qpod."]' <<<"$features" >/dev/null ||
		flunk "qpod.* annotations not listed as unsafe:" "$features"
	mkdir -p "$src"
	for o in $(jq -r '.mountOptions[]' <<<"$features"); do
		case $o in
		bind | rbind | remount | *shared | *slave | *private | *unbindable | rro)
			make_bundle "$BUNDLE" ".process.args = [\"true\"] | .mounts += [{\"destination\": \"/mnt\",
				\"type\": \"bind\", \"source\": \"$src\", \"options\": [\"bind\", \"$o\"]}]" ;;
		*)
			make_bundle "$BUNDLE" ".process.args = [\"true\"] | .mounts += [{\"destination\": \"/mnt\",
				\"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"$o\"]}]" ;;
		esac
		run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
		[ "$status" -eq 0 ] || flunk "mount option $o (listed in features) fails:" "$stderr"
	done
	for ns in $(jq -r '.linux.namespaces[]' <<<"$features"); do
		[ "$ns" = user ] && continue # needs mappings: tests/cli/isolation.bats
		make_bundle "$BUNDLE" ".process.args = [\"true\"] | .linux.namespaces = ([.linux.namespaces[] | select(.type != \"$ns\")] + [{\"type\": \"$ns\"}])"
		run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
		[ "$status" -eq 0 ] || flunk "namespace $ns (listed in features) fails:" "$stderr"
	done
}

@test "create, start, state, list, ps, kill, delete" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60) | .annotations = {\"org.test\": \"yes\"}"

	run qp_detached create "$ID" --bundle "$BUNDLE" --pid-file "$TEST_DIR/pid"
	assert_status 0
	run --separate-stderr qp state "$ID"
	assert_status 0
	local state=$output pid
	assert_eq "$(jq -r .status <<<"$state")" created "status after create"
	assert_eq "$(jq -r .ociVersion <<<"$state" | cut -c1-2)" "1." "ociVersion"
	assert_eq "$(jq -r .id <<<"$state")" "$ID" "id"
	assert_eq "$(jq -r .bundle <<<"$state")" "$(realpath "$BUNDLE")" "bundle"
	assert_eq "$(jq -r .mode <<<"$state")" container "mode"
	assert_eq "$(jq -r '.annotations["org.test"]' <<<"$state")" yes "annotations"
	pid=$(jq -r .pid <<<"$state")
	assert_match "$pid" '^[1-9][0-9]*$' "pid"
	kill -0 "$pid" || flunk "pod pid $pid is not alive"
	assert_eq "$(cat "$TEST_DIR/pid")" "$pid" "pid file"
	assert_eq "$(tr '\0' ' ' </proc/"$pid"/cmdline)" "qpod-init " "cmdline of a created pod's pid"

	run --separate-stderr qp start "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running "status after start"
	# runc's model: the pid is the workload itself (PID 1 of the pod)
	assert_eq "$(pod_field "$ID" pid)" "$pid" "pid after start"
	assert_eq "$(tr '\0' ' ' </proc/"$pid"/cmdline)" "$HELPER sleep 60 " "cmdline of the pod's pid"

	run --separate-stderr qp list
	assert_status 0
	assert_eq "$(head -n1 <<<"$output" | tr -s ' ')" "ID PID STATUS MODE CREATED" "list header"
	grep -qE "^$ID +[0-9]+ +running +container " <<<"$output" || flunk "list: no running row for $ID:" "$output"
	run --separate-stderr qp list --format json
	assert_status 0
	assert_eq "$(jq -r ".[] | select(.id == \"$ID\") | .status" <<<"$output")" running "list json"

	run --separate-stderr qp ps "$ID"
	assert_status 0
	[ "${#lines[@]}" -ge 1 ] || flunk "ps: no pids"
	local l
	for l in "${lines[@]}"; do
		assert_match "$l" '^[0-9]+$' "ps line"
		kill -0 "$l" || flunk "ps: $l is not a live host pid"
	done
	run --separate-stderr qp ps --format json "$ID"
	assert_status 0
	jq -e 'type == "array" and length >= 1 and all(.[]; type == "number")' <<<"$output" >/dev/null ||
		flunk "ps json:" "$output"

	# the workload is PID 1 and has no TERM handler: as under runc, the
	# kernel drops the TERM; KILL ends it
	run --separate-stderr qp kill "$ID" KILL
	assert_status 0
	wait_for 100 status_is "$ID" stopped
	assert_eq "$(pod_field "$ID" pid)" 0 "pid of a stopped pod"

	# runc's answers that containerd relies on: kill --all of a stopped
	# pod succeeds, a plain kill fails with "container not running", 1
	run --separate-stderr qp kill --all "$ID" KILL
	assert_status 0
	run --separate-stderr qp kill "$ID" TERM
	assert_status 1
	assert_eq "$stderr" "qpod: kill: container not running" "kill of a stopped pod"

	run --separate-stderr qp delete "$ID"
	assert_status 0
	run --separate-stderr qp state "$ID"
	assert_qpod_error 125
	run --separate-stderr qp list --format json
	assert_status 0
	assert_eq "$(jq -r ".[] | select(.id == \"$ID\") | .id" <<<"$output")" "" "list after delete"
}

@test "kill: default TERM, names with and without SIG, numbers, --all" {
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c",
		"trap \"echo usr1 >>/dev/shm/log\" USR1; trap \"echo usr2 >>/dev/shm/log\" USR2; trap \"exit 0\" TERM; while :; do sleep 0.05; done"]'
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	wait_for 100 status_is "$ID" running

	qp kill "$ID" USR1
	qp kill "$ID" SIGUSR2
	wait_for 100 qp exec "$ID" -- sh -c 'grep -q usr2 /dev/shm/log'
	qp kill "$ID" 10
	wait_for 100 qp exec "$ID" -- sh -c '[ "$(grep -c usr1 /dev/shm/log)" = 2 ]'

	run --separate-stderr qp kill "$ID" NOSUCHSIG
	assert_qpod_error 125
	assert_eq "$(pod_field "$ID" status)" running "status after a bad kill"

	qp kill "$ID" # TERM: the default signal, trapped by the shell
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"

	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID2" --bundle "$BUNDLE"
	qp start "$ID2"
	qp exec "$ID2" -- "$HELPER" true
	run --separate-stderr qp kill --all "$ID2" KILL
	assert_status 0
	wait_for 100 status_is "$ID2" stopped
	qp delete "$ID2"
}

@test "delete of a running pod needs --force" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr qp delete "$ID"
	assert_qpod_error 125
	assert_eq "$(pod_field "$ID" status)" running "status after refused delete"
	local pid
	pid=$(pod_field "$ID" pid)
	kill -0 "$pid" || flunk "refused delete killed the pod"
	run --separate-stderr qp delete --force "$ID"
	assert_status 0
	run --separate-stderr qp state "$ID"
	assert_qpod_error 125
}

@test "delete of a created (never started) pod" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	qp create "$ID" --bundle "$BUNDLE"
	# OCI: a pod that is not stopped is not deleted without --force
	run --separate-stderr qp delete "$ID"
	assert_qpod_error 125
	assert_eq "$(pod_field "$ID" status)" created "status after refused delete"
	run --separate-stderr qp delete --force "$ID"
	assert_status 0
	run --separate-stderr qp state "$ID"
	assert_qpod_error 125
}

@test "run: exit status of the workload, and the pod is deleted after" {
	make_bundle "$BUNDLE" "$(helper_args exit 3)"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 3
	run --separate-stderr qp state "$ID"
	assert_qpod_error 125

	make_bundle "$BUNDLE" "$(helper_args true)"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
}

@test "run: a workload killed by SIGKILL exits 137" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp_detached run -d "$ID" --bundle "$BUNDLE" --pid-file "$TEST_DIR/pid"
	local pid
	pid=$(cat "$TEST_DIR/pid")
	kill -KILL "$pid"
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"

	# with the tiny init (qpod.init=true) the workload is its child: a
	# workload that kills itself ends the pod with 128+9
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "kill -KILL $$"] | .annotations["qpod.init"] = "true"'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 137
}

@test "qpod.init=true: a tiny init is PID 1, reaps, forwards TERM, hides host paths" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60) | .annotations[\"qpod.init\"] = \"true\""
	qp create "$ID" --bundle "$BUNDLE" --pid-file "$TEST_DIR/pid"
	qp start "$ID"
	run --separate-stderr qp exec "$ID" -- cat /proc/1/cmdline
	assert_status 0
	assert_eq "$output" "qpod-init" "PID 1's command line inside the pod"
	qp kill "$ID" TERM # forwarded to the workload, which dies of it
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"

	make_bundle "$BUNDLE" '.annotations["qpod.init"] = "maybe"'
	run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_match "$stderr" 'qpod.init' "error names the annotation"
}

@test "a created pod ends on kill TERM before start (runc: the init dies of it)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp kill "$ID" TERM
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"
}

@test "run: stdout and stderr of the workload reach the caller" {
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "echo to-out; echo to-err >&2"]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" to-out "stdout"
	assert_eq "$stderr" to-err "stderr"
}

@test "run: SIGTERM to qpod run is forwarded to the workload" {
	make_bundle "$BUNDLE" "$(helper_args sigwait)"
	bg_qp run "$ID" --bundle "$BUNDLE"
	wait_for 200 grep -q ready "$TEST_DIR/bg.out"
	kill -TERM "$BG_PID"
	local rc=0
	wait "$BG_PID" || rc=$?
	assert_eq "$(cat "$TEST_DIR/bg.out")" "ready"$'\n'"SIGTERM" "workload output"
	assert_eq "$rc" 0 "exit status of qpod run"
}

@test "run --detach leaves the pod running" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	run qp_detached run --detach "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running "status"
	qp kill "$ID" KILL
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"
}

@test "exec: status, env, cwd, user" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"

	run --separate-stderr qp exec "$ID" -- "$HELPER" exit 5
	assert_status 5
	run --separate-stderr qp exec -e QPOD_T=42 "$ID" -- "$HELPER" env
	assert_status 0
	assert_contains "$output" "QPOD_T=42" "env"
	assert_contains "$output" "PATH=" "env"
	run --separate-stderr qp exec -w /tmp "$ID" -- "$HELPER" cwd
	assert_status 0
	assert_eq "$output" /tmp "cwd"
	run --separate-stderr qp exec --user 65534:65534 "$ID" -- "$HELPER" ids
	assert_status 0
	assert_match "$output" '^uid=65534 gid=65534 ' "ids"
	run --separate-stderr qp exec "$ID" -- /bin/no-such-command
	assert_qpod_error 127
}

# The brief's form `qpod exec ID [OPTIONS] -- CMD` and `qpod ps ID --format
# json`: options after the ID must work as well as before it.
@test "options after the pod ID (exec ID -e K=V --, ps ID --format json)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr qp exec "$ID" -e QPOD_T=43 -w /tmp --user 65534 -- "$HELPER" env
	assert_status 0
	assert_contains "$output" "QPOD_T=43" "env"
	run --separate-stderr qp ps "$ID" --format json
	assert_status 0
	jq -e 'type == "array" and length >= 1' <<<"$output" >/dev/null || flunk "ps json:" "$output"
}

@test "exec in a stopped pod fails cleanly" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	wait_for 100 status_is "$ID" stopped
	run --separate-stderr qp exec "$ID" -- "$HELPER" true
	assert_qpod_error 125
	qp delete "$ID"
}

@test "global options: --log writes a log file, --log-format json lines parse" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	run --separate-stderr "$QPOD" --root "$ROOT" --log "$TEST_DIR/log" --log-format json --debug \
		run "$ID" --bundle "$BUNDLE"
	assert_status 0
	[ -s "$TEST_DIR/log" ] || flunk "--log file is empty"
	jq -e . "$TEST_DIR/log" >/dev/null || flunk "--log-format json: not JSON lines:" "$(head -5 "$TEST_DIR/log")"
	run --separate-stderr "$QPOD" --root "$ROOT" --log-format yaml list
	assert_qpod_error 125
	run --separate-stderr "$QPOD" --root "$ROOT" no-such-command
	assert_qpod_error 125
}

@test "exec --process FILE --detach --pid-file (the form containerd uses)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	cat >"$TEST_DIR/process.json" <<-'JSON'
	{"args": ["sh", "-c", "echo \"$FOO\" >/dev/shm/out; grep CapEff /proc/self/status >>/dev/shm/out; exec sleep 30"],
	 "env": ["FOO=from-json", "PATH=/bin"], "cwd": "/", "user": {"uid": 0, "gid": 0}}
	JSON
	run qp_detached exec --process "$TEST_DIR/process.json" --detach --pid-file "$TEST_DIR/exec.pid" "$ID"
	assert_status 0
	local pid
	pid=$(cat "$TEST_DIR/exec.pid")
	wait_for 100 grep -q "sleep" "/proc/$pid/cmdline"
	run --separate-stderr qp exec "$ID" -- cat /dev/shm/out
	assert_status 0
	assert_eq "$(head -n1 <<<"$output")" from-json "env from the process file"
	# no capabilities in the file: the pod's set, not qpod's full one
	assert_match "$(tail -n1 <<<"$output")" 'CapEff:\s+00000000a80425fb' "caps"
	run --separate-stderr qp exec --process "$TEST_DIR/process.json" "$ID" -- true
	assert_qpod_error 125
	echo '{"args": "not-an-array"}' >"$TEST_DIR/bad.json"
	run --separate-stderr qp exec --process "$TEST_DIR/bad.json" "$ID"
	assert_qpod_error 125
	qp delete --force "$ID"
}

@test "exec --tty --console-socket: a terminal in the pod, the master to the socket (runc's protocol)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	local sock=$TEST_DIR/console.sock out=$TEST_DIR/console.out
	"$REPO/tests/cli/console-recv.py" "$sock" >"$out" &
	local recv=$!
	wait_for 100 test -S "$sock"
	run --separate-stderr qp exec --tty --console-socket "$sock" "$ID" -- sh -c 'tty; [ -t 0 ] && echo stdin-is-a-tty; exit 4'
	assert_status 4
	wait "$recv" || flunk "console-recv failed"
	assert_match "$(cat "$out")" '/dev/pts/[0-9]+' "tty name"
	assert_match "$(cat "$out")" 'stdin-is-a-tty' "stdin is the terminal"

	# runc's rules: a terminal needs the socket and the socket a terminal
	run --separate-stderr qp exec --tty "$ID" -- true
	assert_qpod_error 125
	run --separate-stderr qp exec --console-socket "$sock" "$ID" -- true
	assert_qpod_error 125
	qp delete --force "$ID"
}

@test "under a subreaper (the shim's view): the pid file's process is the workload and exits with its status; so does exec -d" {
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "sleep 1; exit 9"]'
	lifecycle_under_subreaper
	local pid epid
	pid=$(sed -n 1p "$TEST_DIR/pids")
	epid=$(sed -n 2p "$TEST_DIR/pids")
	assert_contains "$output" "$pid exit 9" "the workload's status"
	assert_contains "$output" "$epid exit 6" "the exec's status"
	assert_eq "$(pod_field "$ID" status)" stopped
	qp delete "$ID"
}

@test "runc's create/run flags are applied: --preserve-fds, --no-pivot, --no-new-keyring" {
	make_bundle "$BUNDLE" "$(helper_args fds)"
	run --separate-stderr bash -c 'exec 3</etc/hostname 4</etc/hostname; exec "$@"' _ \
		"$QPOD" --root "$ROOT" run "$ID" --bundle "$BUNDLE" --preserve-fds 2
	assert_status 0
	assert_eq "$output" "0 1 2 3 4" "fds of the workload with --preserve-fds 2"
	run --separate-stderr bash -c 'exec 3</etc/hostname 4</etc/hostname; exec "$@"' _ \
		"$QPOD" --root "$ROOT" run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" "0 1 2" "fds of the workload without it"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE" --preserve-fds many
	assert_qpod_error 125

	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "cat /etc/os-release >/dev/null; ls / | grep -c ."]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE" --no-pivot
	assert_status 0
	assert_eq "$output" "$(ls "$ROOTFS" | grep -c .)" "--no-pivot: the rootfs is /"

	# a session keyring of the pod's own unless --no-new-keyring (seccomp
	# off: the default profile refuses keyctl)
	make_bundle "$BUNDLE" "$(helper_args keyring) | del(.linux.seccomp)"
	local host mine kept
	host=$("$QPOD_BUILD/tests/helper/qpod-testhelper" keyring)
	mine=$(qp run "$ID" --bundle "$BUNDLE")
	kept=$(qp run "$ID" --bundle "$BUNDLE" --no-new-keyring)
	[ -n "$mine" ] && [ "$mine" != "$host" ] || flunk "the pod shares the host's session keyring ($host)"
	assert_eq "$kept" "$host" "--no-new-keyring keeps the caller's"
}

@test "kill right after start reaches a workload that traps the signal (runtime-tools' killsig)" {
	local out=$TEST_DIR/out sig
	mkdir -p "$out"
	for sig in TERM USR1 USR2; do
		make_bundle "$BUNDLE" ".process.args = [\"sh\", \"-c\", \"trap 'touch /out/$sig' $sig; sleep 10 & wait \$!\"]
			| .mounts += [{\"destination\": \"/out\", \"type\": \"bind\", \"source\": \"$out\", \"options\": [\"rbind\"]}]"
		qp create "$ID" --bundle "$BUNDLE"
		qp start "$ID"
		qp kill "$ID" "$sig"
		wait_for 100 status_is "$ID" stopped
		[ -e "$out/$sig" ] || flunk "the workload did not get $sig"
		qp delete "$ID"
	done
}
