#!/usr/bin/env bats
# tests/cli/pause_update.bats — runc's pause, resume, update and events:
# a paused pod's processes really stop (a counter's output does not
# advance) and go on after resume, `state` says paused, kill and delete
# --force of a paused pod work; update writes the limits into the pod's
# cgroup (flags and --resources JSON from stdin) and refuses what it cannot
# apply; events --stats prints runc's JSON, events streams until the pod
# stops; the same pause/resume for a VM pod.  The common teardown asserts
# that no pod, cgroup or process (QEMU included) is left.

load helpers

# a workload that prints 1, 2, 3... every 50 ms to the pod's stdout
COUNTER='i=0; while :; do i=$((i+1)); echo $i; sleep 0.05; done'

counter_pod() { # [JQ-FILTER]: create + start pod $ID running the counter
	make_bundle "$BUNDLE" ".process.args = [\"sh\", \"-c\", \"$COUNTER\"] | ${1:-.}"
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	wait_for 100 test -s "$TEST_DIR/pod.out"
}

lines_out() { wc -l <"$TEST_DIR/pod.out"; }
more_lines() { [ "$(wc -l <"$1")" -ge "$2" ]; } # FILE N: at least N lines

# the counter stands still for a while (paused) / moves on (running)
assert_stands_still() {
	local a b
	a=$(lines_out)
	sleep 0.6
	b=$(lines_out)
	assert_eq "$b" "$a" "counter lines while paused"
}
assert_moves_on() {
	wait_for 100 more_lines "$TEST_DIR/pod.out" "$(($1 + 1))"
}

frozen_state() { # freezer state of pod $ID as the kernel says it
	local f
	f=$(cg_file freezer freezer.state cgroup.events)
	case $f in
	*freezer.state) cat "$f" ;;
	*) awk '$1 == "frozen" { print ($2 == 1 ? "FROZEN" : "THAWED") }' "$f" ;;
	esac
}

@test "pause stops every process, state says paused, resume lets them go on" {
	counter_pod
	run qp pause "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" paused
	assert_eq "$(qp list --format json | jq -r --arg id "$ID" '.[] | select(.id == $id) | .status')" paused "list"
	assert_eq "$(frozen_state)" FROZEN "the kernel's freezer"
	assert_stands_still
	# no exec into a paused pod (runc refuses it too)
	run --separate-stderr qp exec "$ID" true
	assert_qpod_error 125
	local a
	a=$(lines_out)
	run qp resume "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running
	assert_eq "$(frozen_state)" THAWED "the kernel's freezer"
	assert_moves_on "$a"
}

@test "pause and resume in the wrong state fail as runc's do (exit 1)" {
	counter_pod
	run --separate-stderr qp resume "$ID"
	assert_qpod_error 1
	assert_contains "$stderr" "container not paused"
	qp pause "$ID"
	run --separate-stderr qp pause "$ID"
	assert_qpod_error 1
	assert_contains "$stderr" "container not running"
	qp resume "$ID"
	qp kill "$ID" KILL
	wait_for 100 status_is "$ID" stopped
	for cmd in pause resume events; do
		run --separate-stderr qp "$cmd" "$ID"
		assert_qpod_error 1
		assert_match "$stderr" "not (running|paused)" "$cmd of a stopped pod"
	done
	run --separate-stderr qp update --memory 64M "$ID"
	assert_qpod_error 1
	assert_contains "$stderr" "container not running"
	run --separate-stderr qp pause no-such-pod
	assert_qpod_error 1
}

@test "kill of a paused pod: a signal waits for resume, SIGKILL ends it now" {
	counter_pod '.process.args = ["sh", "-c", "trap \"echo got-usr1\" USR1; '"$COUNTER"'"]'
	qp pause "$ID"
	run qp kill "$ID" USR1
	assert_status 0
	sleep 0.3
	assert_eq "$(pod_field "$ID" status)" paused "after a signal"
	assert_not_contains "$(cat "$TEST_DIR/pod.out")" got-usr1 "output while paused"
	qp resume "$ID"
	wait_for 100 grep -q got-usr1 "$TEST_DIR/pod.out"
	qp pause "$ID"
	run qp kill "$ID" KILL
	assert_status 0
	wait_for 100 status_is "$ID" stopped
	run qp delete "$ID"
	assert_status 0
}

@test "kill --all of a paused pod keeps it paused; delete --force removes it" {
	counter_pod
	qp pause "$ID"
	run qp kill --all "$ID" CONT
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" paused
	run --separate-stderr qp delete "$ID"
	assert_qpod_error 125
	run qp delete --force "$ID"
	assert_status 0
	[ ! -e "$ROOT/$ID" ] || flunk "state dir still there"
}

@test "update: runc's flags land in the pod's cgroup, and stay in its config" {
	counter_pod '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 50}}'
	run --separate-stderr qp update --memory 96M --pids-limit 77 --cpu-shares 512 \
		--cpu-quota 30000 --cpu-period 100000 "$ID"
	assert_status 0
	assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 100663296 "memory"
	assert_eq "$(cat "$(cg_file pids pids.max pids.max)")" 77 "pids"
	local f
	f=$(cg_file cpu cpu.cfs_quota_us cpu.max)
	case $f in
	*cpu.max) assert_eq "$(cat "$f")" "30000 100000" "$f" ;;
	*) assert_eq "$(cat "$f")" 30000 "$f"
	   assert_eq "$(cat "${f%/*}/cpu.shares")" 512 "cpu.shares" ;;
	esac
	# a later update of one limit leaves the others as they are
	qp update --pids-limit -1 "$ID"
	assert_eq "$(cat "$(cg_file pids pids.max pids.max)")" max "pids unlimited"
	assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 100663296 "memory kept"
	# and the pod still runs
	assert_moves_on "$(lines_out)"
}

@test "update --resources - reads OCI LinuxResources JSON from stdin, as the shim sends it" {
	counter_pod '.linux.resources = {"memory": {"limit": 67108864}}'
	local json res='{
		"memory": {"limit": 134217728, "swap": 268435456, "checkBeforeUpdate": true},
		"cpu": {"shares": 256, "quota": 0, "period": 0, "cpus": "0"},
		"pids": {"limit": 40},
		"blockIO": {"weight": 0},
		"devices": [{"allow": false, "access": "rwm"}]
	}'
	if ! host_has cpuset; then
		# no cpuset controller (the v2 guest's kernel has none): refused by name
		# (without the swap limit, which a kernel without swap accounting
		# refuses first: the cpuset refusal alone)
		if host_has swap_accounting; then json=$res; else json=$(jq -c 'del(.memory.swap)' <<<"$res"); fi
		run --separate-stderr qp update --resources - "$ID" <<<"$json"
		assert_status 1
		assert_match "${stderr_lines[-1]}" '^qpod: update: .*cpuset .*not available' "the last stderr line"
		assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 67108864 "memory unchanged"
		res=$(jq -c 'del(.cpu.cpus)' <<<"$res")
	fi
	if ! host_has swap_accounting; then
		# the swap limit cannot be applied here: refused by name, nothing changed
		run --separate-stderr qp update --resources - "$ID" <<<"$res"
		assert_status 1
		assert_match "${stderr_lines[-1]}" '^qpod: update: .*memory.swap: the kernel does not account swap per cgroup' "the last stderr line"
		assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 67108864 "memory unchanged"
		res=$(jq -c 'del(.memory.swap)' <<<"$res")
	fi
	run --separate-stderr qp update --resources - "$ID" <<<"$res"
	assert_status 0
	assert_contains "$stderr" "device rules stay"
	assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 134217728 "memory"
	assert_eq "$(cat "$(cg_file pids pids.max pids.max)")" 40 "pids"
	if host_has cpuset; then
		assert_eq "$(cat "$(cg_file cpuset cpuset.cpus cpuset.cpus)")" 0 "cpuset"
	fi
	# from a file too
	echo '{"pids": {"limit": 41}}' >"$TEST_DIR/res.json"
	run qp update -r "$TEST_DIR/res.json" "$ID"
	assert_status 0
	assert_eq "$(cat "$(cg_file pids pids.max pids.max)")" 41 "pids"
}

@test "update refuses bad input and what it cannot apply, and changes nothing" {
	counter_pod '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 50}}'
	local json want unified='{"unified": {"memory.high": "1"}}'
	# a v2 pod takes linux.resources.unified (a file its cgroup lacks is
	# what it refuses there); a v1 pod refuses the whole map
	[ "$(host_cgroup_layout)" = v2 ] && unified='{"unified": {"memory.no_such_file": "1"}}'
	for json in '{"memory": {"limit": "big"}}' '{"pids": {"limit": 1.5}}' '{"cpu": {"shares": -5}}' \
		'{"cpu": {"cpus": 3}}' '{"pids": 7}' '[1]' '{"memory": {"limit": -7}}' \
		'{"pids": {"limit": -3}}' '{"cpu": {"quota": 10}}' '{"memroy": {"limit": 1}}' \
		'{"memory": {"kernel": 1048576}}' '{"blockIO": {"weight": 5}}' '{"network": {"classID": 1}}' \
		'{"hugepageLimits": [{"pageSize": "2MB", "limit": 2097152}]}' "$unified" \
		'{"memory": {"limit": 4096, "checkBeforeUpdate": true}}' 'not json'; do
		run --separate-stderr qp update --resources - "$ID" <<<"$json"
		assert_qpod_error 1
		assert_match "$stderr" '^qpod: update: ' "error for $json"
	done
	for want in "--memory -5" "--memory 0" "--pids-limit -3" "--pids-limit x" "--cpu-shares -1" \
		"--cpu-quota 5" "--cpu-period 1" "--cpuset-cpus all" "--blkio-weight 5" \
		"--kernel-memory 1M" "--resources - --memory 1G"; do
		# shellcheck disable=SC2086 # the flag and its value
		run --separate-stderr qp update $want "$ID" </dev/null
		assert_qpod_error 1
	done
	run --separate-stderr qp update --resources - "$ID" <<<'{"memory": {"limit": "big"}}'
	assert_qpod_error 1
	assert_contains "$stderr" "memory.limit: expected an integer"
	run --separate-stderr qp update --resources - "$ID" <<<'{"network": {"classID": 10}}'
	assert_qpod_error 1
	assert_contains "$stderr" "network: cannot be applied"
	run --separate-stderr qp update --resources - "$ID" <<<'{"memroy": {}}'
	assert_qpod_error 1
	assert_contains "$stderr" 'unknown field "memroy"'
	assert_eq "$(cat "$(cg_file memory memory.limit_in_bytes memory.max)")" 67108864 "memory unchanged"
	assert_eq "$(cat "$(cg_file pids pids.max pids.max)")" 50 "pids unchanged"
}

@test "events --stats prints runc's stats JSON (cpu, memory, pids)" {
	counter_pod '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 50}}'
	run --separate-stderr qp events --stats "$ID"
	assert_status 0
	assert_eq "${#lines[@]}" 1 "lines"
	jq -e --arg id "$ID" '.type == "stats" and .id == $id' <<<"$output" >/dev/null ||
		flunk "not a stats event of $ID: $output"
	jq -e '.data.cpu.usage.total > 0 and (.data.cpu.usage.user | type) == "number" and
		(.data.cpu.usage.kernel | type) == "number"' <<<"$output" >/dev/null || flunk "cpu: $output"
	jq -e '.data.memory.usage.usage > 0 and .data.memory.usage.limit == 67108864 and
		(.data.memory.usage.failcnt | type) == "number" and (.data.memory.raw | length) > 0' \
		<<<"$output" >/dev/null || flunk "memory: $output"
	# (the counter's sleep may be between two runs: 1 or 2 processes)
	jq -e '.data.pids.current >= 1 and .data.pids.limit == 50' <<<"$output" >/dev/null ||
		flunk "pids: $output"
	# paused, the figures are still there
	qp pause "$ID"
	run qp events --stats "$ID"
	assert_status 0
	# frozen, the pod's processes stay put: as many as its cgroup lists
	# (the counter's sleep may be between two runs at the moment of pause)
	local procs
	procs=$(grep -c . "$(dirname "$(cg_file pids cgroup.procs cgroup.procs)")/cgroup.procs")
	jq -e --argjson n "$procs" '.data.pids.current == $n and $n >= 1' <<<"$output" >/dev/null ||
		flunk "paused: $procs processes in the cgroup: $output"
	qp resume "$ID"
	run --separate-stderr qp events --interval 0s "$ID"
	assert_qpod_error 1
	assert_contains "$stderr" "greater than 0"
	run --separate-stderr qp events --interval 5 "$ID"
	assert_qpod_error 1
}

@test "events streams every interval and ends when the pod stops" {
	counter_pod
	bg_qp events --interval 200ms "$ID"
	wait_for 100 more_lines "$TEST_DIR/bg.out" 3
	jq -se --arg id "$ID" 'length >= 3 and all(.[]; .type == "stats" and .id == $id and .data.cpu.usage.total > 0)' \
		"$TEST_DIR/bg.out" >/dev/null || flunk "events: $(cat "$TEST_DIR/bg.out")"
	qp kill "$ID" KILL
	local i
	for i in $(seq 1 40); do
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.05
	done
	wait "$BG_PID" || flunk "events exited with status $? when the pod stopped"
}

@test "the new commands have --help, and qpod --help lists them" {
	for cmd in pause resume update events; do
		run qp "$cmd" --help
		assert_status 0
		assert_contains "$output" "Usage: qpod $cmd"
		assert_contains "$(qp --help)" "  $cmd "
	done
	assert_contains "$(qp update --help)" "--resources FILE|-"
	assert_contains "$(qp events --help)" "--interval D"
}

@test "vm pod: pause stops the VM (QMP stop), resume lets it go on; update refused" {
	need_vm
	vm_env
	make_bundle "$BUNDLE" ".annotations[\"qpod.mode\"] = \"vm\" | .process.terminal = false |
		.process.args = [\"sh\", \"-c\", \"$COUNTER\"]"
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	wait_for 400 test -s "$TEST_DIR/pod.out"
	run qp pause "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" paused
	assert_stands_still
	run --separate-stderr qp exec "$ID" true
	assert_qpod_error 125
	assert_contains "$stderr" "paused"
	run qp events --stats "$ID"
	assert_status 0
	jq -e '.data.cpu.usage.total > 0' <<<"$output" >/dev/null || flunk "vm stats: $output"
	run --separate-stderr qp update --memory 64M "$ID"
	assert_qpod_error 1
	assert_contains "$stderr" "no memory balloon"
	local a
	a=$(lines_out)
	run qp resume "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running
	assert_moves_on "$a"
	# an update that changes nothing is fine; a paused VM is deleted with --force
	run qp update --resources - "$ID" <<<'{"memory": {}}'
	assert_status 0
	qp pause "$ID"
	run qp delete --force "$ID"
	assert_status 0
}
