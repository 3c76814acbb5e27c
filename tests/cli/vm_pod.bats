#!/usr/bin/env bats
# tests/cli/vm_pod.bats — one VM per pod through qpod's own CLI: containers
# created into a vm pod made with --sandbox (qpod.sandbox) run in its VM
# (`run --pod`, annotation qpod.pod): their own root, PID and mount
# namespaces, cgroup limits and exit status, the pod's network and
# hostname; exec joins one; what the guest cannot do for one container is
# refused by name; a killed keeper, monitor or QEMU leaves nothing behind
# after delete.  The pod's root is a read-only one with nothing but a
# static /pause in it, as containerd runs the Kubernetes pause image.

load helpers

setup() { setup_vm; }

# pid_gone PID: no such process, or a zombie its (re)parent has not reaped
pid_gone() {
	[ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# $ID: a --sandbox vm pod whose root holds only /pause (read-only), running
start_sandbox() {
	mkdir -p "$TEST_DIR/pause-root"
	cp "$ROOTFS$HELPER" "$TEST_DIR/pause-root/pause"
	make_bundle "$BUNDLE" ".root.path = \"$TEST_DIR/pause-root\" | .root.readonly = true
		| .process.args = [\"/pause\", \"sleep\", \"600\"] | .annotations = {\"qpod.mode\": \"vm\", \"qpod.sandbox\": \"true\"}"
	qp_detached create --bundle "$BUNDLE" "$ID" || flunk "create the sandbox: $(cat "$TEST_DIR/pod.err")"
	qp start "$ID"
	assert_eq "$(pod_field "$ID" status)" running "the sandbox"
}

# the QEMUs of this test's state root
test_qemus() { qemus_of_root "$ROOT"; }

# a container's bundle in $TEST_DIR/$1 (its own rootfs copy with a marker
# file) inside pod $ID, then the jq FILTER
member_bundle() { # NAME FILTER
	local dir=$TEST_DIR/$1
	mkdir -p "$dir"
	cp -a "$ROOTFS" "$dir/rootfs"
	echo "$1" >"$dir/rootfs/marker"
	"$QPOD" spec >"$dir/config.default.json"
	jq --arg pod "$ID" --arg r "$dir/rootfs" ".root.path = \$r | del(.hostname)
		| .annotations = {\"qpod.mode\": \"vm\", \"qpod.pod\": \$pod}
		| .linux.namespaces = [{\"type\": \"pid\"}, {\"type\": \"mount\"}] | $2" \
		"$dir/config.default.json" >"$dir/config.json" || flunk "member_bundle: $2"
}

@test "vm pod: run --pod runs a container in the --sandbox pod's VM: one QEMU, its own root and PID 1, the pod's hostname, its limits and exit status" {
	start_sandbox
	local q
	q=$(test_qemus)
	assert_eq "$(wc -w <<<"$q")" 1 "QEMUs of the sandbox"
	run --separate-stderr qp run --pod "$ID" --name "$ID2" --rm --memory 48M --pids 20 "$ROOTFS" -- sh -c \
		'echo "host $(hostname) pid $$"; ls /pause 2>&1; cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup); echo "mem $(cat $cg/memory.max) pids $(cat $cg/pids.max)"; exit 9'
	assert_status 9
	assert_contains "$output" "host qpod pid 1" "the pod's hostname, PID 1 of its own namespace"
	assert_contains "$output" "No such file" "its own root (the pod's /pause is not in it)"
	assert_contains "$output" "mem 50331648 pids 20" "its limits in its own cgroup"
	assert_eq "$(test_qemus)" "$q" "QEMUs while and after the container ran"
	[ ! -e "$ROOT/$ID2" ] || flunk "--rm left the container's state"
	[ -z "$(ls "$ROOT/$ID/ctrs")" ] || flunk "the pod share keeps: $(ls "$ROOT/$ID/ctrs")"
}

@test "vm pod: run -t --pod: the container on a terminal of the guest's, qpod's own terminal relayed, its exit status" {
	start_sandbox
	run timeout 60 script -qec "$(printf '%q ' "$QPOD" --root "$ROOT" run -t --rm --pod "$ID" --name "$ID2" "$ROOTFS" -- sh -c 'tty; exit 3')" /dev/null </dev/null
	assert_status 3
	assert_match "$output" '/dev/pts/[0-9]+' "the container's stdin is a terminal"
	[ ! -e "$ROOT/$ID2" ] || flunk "--rm left the container's state"
}

@test "vm pod: create/start/state/exec/kill/delete of a container inside a vm pod (qpod.pod), two at once over the pod's loopback" {
	start_sandbox
	member_bundle web '.process.args = ["sh", "-c", "mkdir -p /tmp/w && cat /marker >/tmp/w/index.html && exec httpd -f -p 127.0.0.1:8081 -h /tmp/w"]'
	member_bundle cli '.process.args = ["sh", "-c", "sleep 1; wget -qO- http://127.0.0.1:8081/; cat /marker; exit 6"]'
	qp_detached create --bundle "$TEST_DIR/web" "$ID-web" || flunk "create: $(cat "$TEST_DIR/pod.err")"
	assert_eq "$(pod_field "$ID-web" status)" created "after create"
	assert_eq "$(pod_field "$ID-web" pod)" "$ID" "state names its pod"
	local keeper
	keeper=$(pod_field "$ID-web" pid)
	kill -0 "$keeper" || flunk "the container's pid is not alive"
	qp start "$ID-web"
	assert_eq "$(pod_field "$ID-web" status)" running "after start"
	# exec joins the container: its root and its PID namespace
	run --separate-stderr qp exec "$ID-web" sh -c 'cat /marker; cat /proc/1/cmdline | tr "\0" " "'
	assert_status 0
	assert_contains "$output" "web" "exec sees the container's root"
	assert_contains "$output" "httpd -f -p 127.0.0.1:8081" "exec sees the container's PID 1"
	# the second container reaches the first on the pod's loopback
	qp create --bundle "$TEST_DIR/cli" "$ID-cli" </dev/null >"$TEST_DIR/cli.out" 2>"$TEST_DIR/cli.err"
	qp start "$ID-cli"
	wait_for 300 status_is "$ID-cli" stopped
	assert_eq "$(cat "$TEST_DIR/cli.out")" "$(printf 'web\ncli')" "the client's output"
	# kill: to the container's PID 1 (httpd, PID 1 of its namespace, has no
	# TERM handler: the kernel keeps TERM from it, as under runc)
	qp kill "$ID-web" KILL
	wait_for 300 status_is "$ID-web" stopped
	pid_gone "$keeper" || flunk "the container's pid outlived it"
	# the guest's cgroups, as one more container of the pod (without a
	# cgroup namespace) sees them
	member_bundle look '.process.args = ["ls", "/sys/fs/cgroup"]'
	run --separate-stderr qp run --bundle "$TEST_DIR/look" "$ID-look"
	assert_status 0
	assert_contains "$output" "$ID-look" "the looking container's own cgroup"
	assert_not_contains "$output" "$ID-web" "the ended containers' cgroups in the guest"
	assert_not_contains "$output" "$ID-cli" "the ended containers' cgroups in the guest"
	qp delete "$ID-web"
	qp delete "$ID-cli"
	[ -z "$(ls "$ROOT/$ID/ctrs")" ] || flunk "the pod share keeps: $(ls "$ROOT/$ID/ctrs")"
}

@test "vm pod: events --stats, stats and update of a container inside a vm pod: its own cgroup's usage and limits in the guest" {
	start_sandbox
	qp run -d --pod "$ID" --name "$ID-a" --memory 64M --pids 30 "$ROOTFS" -- sh -c 'echo ready; sleep 600' \
		</dev/null >/dev/null 2>&1
	qp run -d --pod "$ID" --name "$ID-b" --memory 32M "$ROOTFS" -- sh -c 'sleep 601 & sleep 602 & wait' \
		</dev/null >/dev/null 2>&1
	run --separate-stderr qp events --stats "$ID-a"
	assert_status 0
	jq -e '.type == "stats" and .data.memory.usage.limit == 67108864 and .data.memory.usage.usage > 0
		and .data.pids.limit == 30 and .data.pids.current >= 1 and .data.cpu.usage.total > 0' <<<"$output" >/dev/null ||
		flunk "events --stats of a: $output"
	run --separate-stderr qp events --stats "$ID-b"
	assert_status 0
	jq -e '.data.memory.usage.limit == 33554432 and .data.pids.current == 3' <<<"$output" >/dev/null ||
		flunk "events --stats of b (its sh and two sleeps): $output"
	run --separate-stderr qp stats "$ID-a"
	assert_status 0
	jq -e '.cgroup.usage_kb > 0' <<<"$output" >/dev/null || flunk "stats of a: $output"
	# update: new limits in its cgroup in the guest, what the guest cannot
	# apply refused by name and nothing changed
	qp update --pids-limit 5 --memory 48M "$ID-a"
	run --separate-stderr qp events --stats "$ID-a"
	jq -e '.data.pids.limit == 5 and .data.memory.usage.limit == 50331648' <<<"$output" >/dev/null ||
		flunk "events --stats after update: $output"
	# cpus: the VM's own (one vCPU); one it has not is refused by name
	qp update --cpuset-cpus 0 --cpuset-mems 0 "$ID-a"
	run --separate-stderr qp exec "$ID-a" -- sh -c 'cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup); cat $cg/cpuset.cpus $cg/cpuset.mems'
	assert_status 0
	assert_eq "$output" $'0\n0' "the container's cpuset in the guest"
	run --separate-stderr qp update --cpuset-cpus 0-1 "$ID-a"
	[ "$status" -ne 0 ] || flunk "update --cpuset-cpus with a CPU the VM has not succeeded"
	assert_contains "$stderr" "is not a list of the pod's VM's CPUs (0-0)"
	run --separate-stderr qp update --memory 2G --memory-swap 2G "$ID-a"
	[ "$status" -ne 0 ] || flunk "a memory limit above the VM's RAM was taken"
	assert_contains "$stderr" "more than the pod's VM has"
	run --separate-stderr qp events --stats "$ID-a"
	jq -e '.data.pids.limit == 5 and .data.memory.usage.limit == 50331648' <<<"$output" >/dev/null ||
		flunk "events --stats after refused updates: $output"
	qp update --pids-limit -1 "$ID-a"
	run --separate-stderr qp events --stats "$ID-a"
	jq -e '(.data.pids.limit // 0) == 0' <<<"$output" >/dev/null || flunk "pids limit after --pids-limit -1: $output"
	qp delete --force "$ID-a"
	qp delete --force "$ID-b"
}

@test "vm pod: what a container inside a vm pod cannot have is refused by name, and nothing is left" {
	start_sandbox
	local bad
	for bad in '.linux.namespaces += [{"type": "user"}]|user' \
		'.hostname = "other"|hostname' \
		'.linux.namespaces += [{"type": "network", "path": "/proc/1/ns/net"}]|is not pod' \
		'.linux.resources.memory = {"limit": 1073741824}|more than the pod'"'"'s VM has' \
		'.linux.resources.cpu = {"cpus": "1"}|not a list of the pod'"'"'s VM'"'"'s CPUs' \
		'.linux.resources.cpu = {"mems": "0,"}|not a list of the pod'"'"'s VM'"'"'s memory nodes'; do
		member_bundle bad "${bad%%|*}"
		run qp_stdio_files create --bundle "$TEST_DIR/bad" "$ID2"
		qp_file_stderr
		[ "$status" -ne 0 ] || flunk "create accepted: ${bad%%|*}"
		assert_contains "$stderr" "${bad##*|}" "${bad%%|*}"
		[ ! -e "$ROOT/$ID2" ] || flunk "a refused create left its state: ${bad%%|*}"
		rm -rf "$TEST_DIR/bad"
	done
	[ -z "$(ls "$ROOT/$ID/ctrs")" ] || flunk "the pod share keeps: $(ls "$ROOT/$ID/ctrs")"
	# a pod that does not hold containers, one that does not exist
	make_bundle "$TEST_DIR/plain" '.annotations = {"qpod.mode": "vm"} | .process.args = ["sleep", "600"]'
	qp_detached create --bundle "$TEST_DIR/plain" "$ID-plain"
	qp start "$ID-plain"
	run --separate-stderr qp run --pod "$ID-plain" "$ROOTFS" -- true
	assert_status 125
	assert_contains "$stderr" "does not hold containers"
	run --separate-stderr qp run --pod "$ID-none" "$ROOTFS" -- true
	assert_status 125
	assert_contains "$stderr" "does not exist"
	# pause of one container: refused, naming the pod; update before it
	# runs: refused (its cgroup in the guest is made at start)
	member_bundle c '.process.args = ["sleep", "600"]'
	qp_detached create --bundle "$TEST_DIR/c" "$ID2"
	qp start "$ID2"
	run --separate-stderr qp pause "$ID2"
	[ "$status" -ne 0 ] || flunk "pause of a container inside a vm pod succeeded"
	assert_contains "$stderr" "pause the pod"
	member_bundle d '.process.args = ["sleep", "600"]'
	qp_detached create --bundle "$TEST_DIR/d" "$ID-d"
	run --separate-stderr qp update --pids-limit 5 "$ID-d"
	[ "$status" -ne 0 ] || flunk "update of a created container inside a vm pod succeeded"
	assert_contains "$stderr" "once it runs"
}

@test "vm pod: SIGKILL of a container's keeper ends the container in the guest; of the pod's QEMU, every container ends; delete leaves nothing" {
	start_sandbox
	member_bundle a '.process.args = ["sleep", "601"]'
	member_bundle b '.process.args = ["sleep", "602"]'
	# an observer in the pod's (the guest's) PID namespace: the pod's root
	# has no ps
	member_bundle obs '.process.args = ["sleep", "604"] | .linux.namespaces = [{"type": "mount"}]'
	local c
	for c in a b obs; do
		qp_detached create --bundle "$TEST_DIR/$c" "$ID-$c"
		qp start "$ID-$c"
	done
	run --separate-stderr qp exec "$ID-obs" ps -o args
	assert_contains "$output" "sleep 601"
	kill -KILL "$(pod_field "$ID-a" pid)"
	wait_for 300 status_is "$ID-a" stopped
	local i
	for i in $(seq 1 100); do
		qp exec "$ID-obs" ps -o args | grep -q "sleep 601" || break
		sleep 0.1
	done
	run --separate-stderr qp exec "$ID-obs" ps -o args
	assert_not_contains "$output" "sleep 601" "the container of the killed keeper"
	assert_contains "$output" "sleep 602" "the other container"
	qp delete "$ID-a"
	# the VM dies under the other container: its keeper ends (137)
	local keeper
	keeper=$(pod_field "$ID-b" pid)
	kill -KILL "$(pod_field "$ID" vmm_pid)"
	wait_for 300 status_is "$ID-b" stopped
	pid_gone "$keeper" || flunk "the keeper outlived its VM"
	qp delete "$ID-b"
	qp delete "$ID-obs"
	qp delete --force "$ID"
	run --separate-stderr qp gc
	assert_status 0
}

@test "vm pod: SIGKILL of the pod's monitor: its containers end, delete and gc leave nothing" {
	start_sandbox
	qp run -d --pod "$ID" --name "$ID2" "$ROOTFS" -- sleep 603 </dev/null >/dev/null 2>&1
	assert_eq "$(pod_field "$ID2" status)" running
	kill -KILL "$(pod_field "$ID" pid)"
	wait_for 300 status_is "$ID2" stopped
	wait_for 300 status_is "$ID" stopped
	qp delete "$ID2"
	qp delete "$ID"
	run --separate-stderr qp gc
	assert_status 0
}
