#!/usr/bin/env bats
# tests/cli/hooks.bats — OCI hooks (config.md "POSIX-platform Hooks",
# runtime.md "Lifecycle"): every kind runs at its point of create / start /
# delete and of run, with the OCI state on stdin, its args and env, where
# it should run (createContainer in the pod's mount namespace with the
# rootfs as cwd, startContainer inside the pod's root); timeouts; failures
# that fail create or start and leave nothing behind, and those (poststart,
# poststop) that only warn; vm pods. Every hook appends a line
# "KIND<TAB>STATE<TAB>EXTRA" to $LOG, which the pod sees as /mnt/log.

load helpers

# hook_bundle HOOKS-JSON [JQ-FILTER]: $BUNDLE with these hooks, the
# workload appending "workload" to the log, then sleeping; $TEST_DIR/shared
# bind-mounted on the pod's /mnt; the hook scripts in $TEST_DIR.
hook_bundle() {
	local hooks=$1 filter=${2:-.}
	LOG=$TEST_DIR/shared/log
	mkdir -p "$TEST_DIR/shared"
	echo pod-mount >"$TEST_DIR/shared/marker"
	: >"$LOG"
	# a host hook: its kind and the state, in the log next to it
	cat >"$TEST_DIR/hook.sh" <<'EOF'
#!/bin/sh
printf '%s\t%s\t%s\n' "$1" "$(cat)" "$2" >>"$(dirname "$0")/shared/log"
EOF
	# createContainer: where it runs (cwd) and what it sees there (the
	# pod's /mnt is a mount of the pod's mount namespace only)
	cat >"$TEST_DIR/cc.sh" <<'EOF'
#!/bin/sh
state=$(cat)
printf 'createContainer\t%s\tcwd=%s mnt=%s\n' "$state" "$PWD" "$(cat mnt/marker 2>/dev/null || echo host)" \
	>>"$(dirname "$0")/shared/log"
EOF
	# startContainer, inside the pod (/mnt is $TEST_DIR/shared there): is
	# its root the pod's, its env the workload's?
	cat >"$TEST_DIR/shared/sc.sh" <<EOF
#!/bin/sh
printf 'startContainer\t%s\troot=%s env=%s\n' "\$(cat)" "\$(test -x $HELPER && echo pod)" "\$HOOKVAR" >>/mnt/log
EOF
	chmod +x "$TEST_DIR/hook.sh" "$TEST_DIR/cc.sh" "$TEST_DIR/shared/sc.sh"
	make_bundle "$BUNDLE" ".process.args = [\"sh\", \"-c\", \"echo workload >>/mnt/log; exec sleep 60\"]
		| .process.env += [\"HOOKVAR=from-process\"]
		| .mounts += [{destination: \"/mnt\", type: \"bind\", source: \"$TEST_DIR/shared\", options: [\"rbind\", \"rw\"]}]
		| .hooks = $hooks | $filter"
}

# host_hook KIND: a hook object running hook.sh KIND
host_hook() {
	jq -nc --arg p "$TEST_DIR/hook.sh" --arg k "$1" '{path: $p, args: [$p, $k]}'
}

# all six kinds; startContainer's path resolves in the pod's root
all_hooks() {
	echo "{\"prestart\": [$(host_hook prestart)], \"createRuntime\": [$(host_hook createRuntime)],
		\"createContainer\": [{\"path\": \"$TEST_DIR/cc.sh\"}], \"startContainer\": [{\"path\": \"/mnt/sc.sh\"}],
		\"poststart\": [$(host_hook poststart)], \"poststop\": [$(host_hook poststop)]}"
}

kinds() { cut -f1 "$LOG" | tr '\n' ' '; }
state_of() { awk -F'\t' -v k="$1" '$1 == k { print $2; exit }' "$LOG"; }
extra_of() { awk -F'\t' -v k="$1" '$1 == k { print $3; exit }' "$LOG"; }

# assert_state KIND STATUS PID: the state KIND got on its stdin
assert_state() {
	local s
	s=$(state_of "$1")
	[ -n "$s" ] || flunk "no $1 line in the log:" "$(cat "$LOG")"
	jq -e . >/dev/null <<<"$s" || flunk "$1: stdin was not JSON: $s"
	assert_eq "$(jq -r .id <<<"$s")" "$ID" "$1 state id"
	assert_eq "$(jq -r .status <<<"$s")" "$2" "$1 state status"
	assert_eq "$(jq -r '.pid // "none"' <<<"$s")" "$3" "$1 state pid"
	assert_eq "$(jq -r .bundle <<<"$s")" "$(realpath "$BUNDLE")" "$1 state bundle"
	assert_eq "$(jq -r .ociVersion <<<"$s" | cut -c1-2)" "1." "$1 state ociVersion"
	assert_eq "$(jq -r '.annotations["org.test"]' <<<"$s")" hooks "$1 state annotations"
}

assert_no_pods() {
	run --separate-stderr qp list --quiet
	assert_status 0
	assert_eq "$output" "" "qpod list"
	assert_eq "$(pod_cgroup_dirs "$ID")" "" "cgroups of $ID"
	[ ! -e "$ROOT/$ID" ] || flunk "state dir $ROOT/$ID left"
}

@test "hooks: each kind at its point of create, start and delete, with the state on stdin" {
	hook_bundle "$(all_hooks)" '.annotations = {"org.test": "hooks"}'
	local pid
	qp_detached create --bundle "$BUNDLE" "$ID"
	assert_eq "$(kinds)" "prestart createRuntime createContainer " "hooks run by create"
	pid=$(pod_field "$ID" pid)
	# runtime namespace: the pod's host pid; the container's: its own (runc)
	assert_state prestart creating "$pid"
	assert_state createRuntime creating "$pid"
	assert_state createContainer creating 1
	assert_eq "$(extra_of createContainer)" "cwd=$(realpath "$ROOTFS") mnt=pod-mount" \
		"createContainer runs in the rootfs, in the pod's mount namespace"

	run --separate-stderr qp start "$ID"
	assert_status 0
	assert_eq "$stderr" "" "start's stderr"
	wait_for 100 grep -q workload "$LOG"
	assert_eq "$(kinds | sed 's/workload //')" \
		"prestart createRuntime createContainer startContainer poststart " "hooks run by start"
	assert_match "$(kinds)" "startContainer .*workload" "startContainer before the workload"
	assert_state startContainer created 1
	assert_eq "$(extra_of startContainer)" "root=pod env=from-process" \
		"startContainer runs in the pod's root with process.env"
	assert_state poststart running "$pid"

	qp kill "$ID" KILL
	wait_for 100 status_is "$ID" stopped
	assert_not_contains "$(kinds)" poststop "before delete"
	run --separate-stderr qp delete "$ID"
	assert_status 0
	assert_state poststop stopped none
	assert_match "$(kinds)" "poststart .*poststop $" "poststop last"
	assert_no_pods
}

@test "hooks: run (create + start + wait + delete) runs all six in order" {
	hook_bundle "$(all_hooks)" '.annotations = {"org.test": "hooks"} | .process.args = ["sh", "-c", "echo workload >>/mnt/log"]'
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$(kinds | sed 's/workload //')" \
		"prestart createRuntime createContainer startContainer poststart poststop " "hooks of run"
	assert_match "$(kinds)" "startContainer .*workload .*poststop" "order around the workload"
	assert_state poststop stopped none
	assert_no_pods
}

@test "hooks: args, env and their defaults" {
	local script
	# args[0] is argv[0] (as /proc shows it), env is exactly the hook's
	script=$(
		cat <<EOF
a0=\$(tr '\0' '\n' </proc/\$\$/cmdline | head -n1)
printf 'args\t{}\targv0=%s arg1=%s env=%s\n' "\$a0" "\$1" "\$(/usr/bin/env | grep -v ^PWD= | tr '\n' ' ')" >>$TEST_DIR/shared/log
EOF
	)
	cat >"$TEST_DIR/argv0.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
printf 'defaults\t{}\targv0=%s argc=%s inherited=%s\n' "$0" "$#" "$QPOD_HOOK_TEST" >>"$(dirname "$0")/shared/log"
EOF
	chmod +x "$TEST_DIR/argv0.sh"
	hook_bundle "$(jq -nc --arg s "$script" --arg d "$TEST_DIR/argv0.sh" '{
		prestart: [{path: "/bin/sh", args: ["my-argv0", "-c", $s, "x0", "first-arg"], env: ["FOO=bar"]}],
		createRuntime: [{path: $d}]}')"
	QPOD_HOOK_TEST=inherited qp_detached create --bundle "$BUNDLE" "$ID"
	assert_eq "$(extra_of args)" "argv0=my-argv0 arg1=first-arg env=FOO=bar " "args and env as given"
	assert_eq "$(extra_of defaults)" "argv0=$TEST_DIR/argv0.sh argc=0 inherited=inherited" \
		"no args: argv = {path}; no env: qpod's environment"
}

@test "hooks: a hook may ask qpod about its own pod (no deadlock on the pod's lock)" {
	cat >"$TEST_DIR/ask.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
printf '%s\t{}\t%s\n' "$1" "$("$2" --root "$3" state "$4" | jq -r .status)" >>"$(dirname "$0")/shared/log"
EOF
	chmod +x "$TEST_DIR/ask.sh"
	local k hooks="{"
	for k in prestart poststart poststop; do
		hooks+="\"$k\": [$(jq -nc --arg p "$TEST_DIR/ask.sh" --arg k $k --arg q "$QPOD" --arg r "$ROOT" --arg id "$ID" \
			'{path: $p, args: [$p, $k, $q, $r, $id], timeout: 20}')],"
	done
	hook_bundle "${hooks%,}}" '.process.args = ["sleep", "1"]'
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$stderr" "" "run's stderr"
	assert_eq "$(kinds)" "prestart poststart poststop " "hooks"
	assert_eq "$(extra_of prestart) $(extra_of poststart) $(extra_of poststop)" "created running stopped" \
		"qpod state from the hooks"
	assert_no_pods
}

@test "hooks: a hook past its timeout is killed and fails create; nothing is left" {
	cat >"$TEST_DIR/sleeper.sh" <<'EOF'
#!/bin/sh
sleep 30 &
wait
EOF
	chmod +x "$TEST_DIR/sleeper.sh"
	hook_bundle "{\"createRuntime\": [{\"path\": \"$TEST_DIR/sleeper.sh\", \"timeout\": 1}], \"poststop\": [$(host_hook poststop)]}"
	SECONDS=0
	run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	[ "$SECONDS" -lt 10 ] || flunk "create took $SECONDS s with a 1 s hook timeout"
	assert_eq "${stderr_lines[0]}" \
		"qpod: create: createRuntime hook #0 \"$TEST_DIR/sleeper.sh\": did not finish within its timeout of 1 s (killed)"
	assert_eq "$(pgrep -f "$TEST_DIR/sleeper.sh")" "" "the hook"
	# runtime.md: the pod is destroyed, then poststop runs
	assert_eq "$(kinds)" "poststop " "hooks after the failed create"
	assert_no_pods
}

@test "hooks: a failing prestart, createRuntime or createContainer fails create; nothing is left" {
	local kind
	for kind in prestart createRuntime createContainer; do
		hook_bundle "{\"$kind\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo to-stdout; echo to-stderr >&2; exit 3\"]}],
			\"poststop\": [$(host_hook poststop)]}"
		run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
		assert_qpod_error 125
		assert_eq "${stderr_lines[0]}" \
			"qpod: create: $kind hook #0 \"/bin/sh\": exit status 3 (stdout: \"to-stdout\", stderr: \"to-stderr\")"
		assert_eq "$(kinds)" "poststop " "$kind: hooks after the failed create"
		assert_no_pods
	done
	# a hook that is not there
	hook_bundle '{"prestart": [{"path": "/no/such/hook"}]}'
	run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_eq "${stderr_lines[0]}" "qpod: create: prestart hook #0 \"/no/such/hook\": exec: No such file or directory"
	assert_no_pods
}

@test "hooks: a failing startContainer fails start and stops the pod; run leaves nothing" {
	hook_bundle "{\"startContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo no >&2; exit 4\"]}],
		\"poststart\": [$(host_hook poststart)], \"poststop\": [$(host_hook poststop)]}"
	qp_detached create --bundle "$BUNDLE" "$ID"
	run --separate-stderr qp start "$ID"
	assert_qpod_error 125
	assert_eq "${stderr_lines[0]}" "qpod: start: startContainer hook #0 \"/bin/sh\": exit status 4 (stderr: \"no\")"
	wait_for 100 status_is "$ID" stopped
	assert_eq "$(kinds)" "" "no workload, no poststart"
	run --separate-stderr qp delete "$ID"
	assert_status 0
	assert_eq "$(kinds)" "poststop " "delete runs poststop"
	assert_no_pods

	: >"$LOG"
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_eq "${stderr_lines[0]}" "qpod: run: startContainer hook #0 \"/bin/sh\": exit status 4 (stderr: \"no\")"
	assert_eq "$(kinds)" "poststop " "run: the pod deleted"
	assert_no_pods
}

@test "hooks: a failing poststart or poststop only warns" {
	hook_bundle '{"poststart": [{"path": "/bin/false"}], "poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "kill -9 $$"]}]}'
	qp_detached create --bundle "$BUNDLE" "$ID"
	run --separate-stderr qp start "$ID"
	assert_status 0
	assert_eq "$stderr" "qpod: warning: poststart hook #0 \"/bin/false\": exit status 1" "start's warning"
	assert_eq "$(pod_field "$ID" status)" running "status after the failed poststart"
	run --separate-stderr qp delete --force "$ID"
	assert_status 0
	assert_eq "$stderr" "qpod: warning: poststop hook #0 \"/bin/sh\": killed by signal 9 (Killed)" "delete's warning"
	assert_no_pods
}

@test "hooks: features lists every kind, qpod spec has none, bad hooks are refused" {
	run --separate-stderr "$QPOD" features
	assert_status 0
	assert_eq "$(jq -c .hooks <<<"$output")" \
		'["prestart","createRuntime","createContainer","startContainer","poststart","poststop"]' "features .hooks"
	run --separate-stderr "$QPOD" spec
	assert_status 0
	assert_eq "$(jq -c .hooks <<<"$output")" null "hooks in the default spec"

	hook_bundle '{"poststop": [{"path": "cleanup.sh"}]}'
	run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_eq "${stderr_lines[0]}" "qpod: create: config.json: hooks.poststop[0].path: must be an absolute path"
	hook_bundle '{"prestart": [{"path": "/bin/true", "timeout": 0}]}'
	run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_contains "${stderr_lines[0]}" "hooks.prestart[0].timeout: expected an integer in 1.."
	assert_no_pods
}

@test "hooks: vm pods run the runtime-namespace hooks and refuse those of the guest" {
	need_vm
	vm_env
	local kind
	for kind in createContainer startContainer; do
		hook_bundle "{\"$kind\": [{\"path\": \"/bin/true\"}], \"poststop\": [$(host_hook poststop)]}" \
			'.annotations["qpod.mode"] = "vm"'
		run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
		assert_qpod_error 125
		assert_eq "${stderr_lines[0]}" \
			"qpod: create: hooks.$kind: not supported in vm pods (they would run inside the guest)"
		assert_eq "$(kinds)" "" "$kind: no hook ran"
		assert_no_pods
	done

	hook_bundle "{\"prestart\": [$(host_hook prestart)], \"createRuntime\": [$(host_hook createRuntime)],
		\"poststart\": [$(host_hook poststart)], \"poststop\": [$(host_hook poststop)]}" \
		'.annotations = {"org.test": "hooks", "qpod.mode": "vm"} | .mounts |= map(select(.destination != "/mnt"))
		| .process.args = ["true"]'
	run --separate-stderr qp run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$(kinds)" "prestart createRuntime poststart poststop " "hooks of a vm run"
	assert_match "$(jq -r .pid <<<"$(state_of prestart)")" '^[1-9][0-9]*$' "prestart pid"
	assert_state poststop stopped none
	assert_no_pods

	# a failing createRuntime stops the booted VM (its monitor and QEMU)
	hook_bundle "{\"createRuntime\": [{\"path\": \"/bin/false\"}], \"poststop\": [$(host_hook poststop)]}" \
		'.annotations["qpod.mode"] = "vm" | .mounts |= map(select(.destination != "/mnt"))'
	run --separate-stderr qp create --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_eq "${stderr_lines[0]}" "qpod: create: createRuntime hook #0 \"/bin/false\": exit status 1"
	assert_eq "$(kinds)" "poststop " "hooks after the failed create"
	assert_eq "$(pgrep -f "qemu-system-x86_64.*$TEST_DIR")" "" "QEMU of the failed create"
	assert_no_pods
}
