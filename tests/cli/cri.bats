#!/usr/bin/env bats
# tests/cli/cri.bats — Kubernetes' view of qpod: the CRI (runtime.v1) of a
# private containerd 1.6 (CRI plugin enabled), spoken by tools/cri/cri.py
# (python3-grpcio, python3-protobuf, our own runtime_v1.proto), with two
# runtime handlers on the runc v2 shim: `qpod` (container pods) and
# `qpod-vm` (pod annotation qpod.mode=vm, passed on by pod_annotations =
# ["qpod.*"]). Pod networking: containerd runs in a network namespace of
# the file's own ($CD_NETNS), with a private CNI conf and bin dir: CNI's
# bridge plugin (bridge qpcri0, gateway 10.255.255.1, host-local addresses
# of 10.255.255.0/24 with their leases under $CD_DIR), so the bridge, the
# pods' veths and every packet stay in that namespace; the pods' network
# namespaces are mounted under containerd's private state dir. A qpod-vm
# pod's address is on its guest's eth0 (net/mirror.h). Images are
# imported into the k8s.io namespace from local tarballs; nothing is pulled.
#
# The lifecycle in both modes: RunPodSandbox, CreateContainer,
# StartContainer, ExecSync, ContainerStats, StopContainer (TERM, and KILL
# after the timeout; within 30 s), RemoveContainer, StopPodSandbox,
# RemovePodSandbox; shareProcessNamespace (pid = POD); and
# docs/containerd.md's configuration and RuntimeClass examples are parsed
# (containerd config dump, python3-yaml) so that the documentation cannot
# rot. The teardown of each test removes its pods through the CRI and
# asserts that nothing of them is left; the last test stops containerd and
# asserts that for the whole file. tty: true (CreateContainer) in both modes.

load helpers
load containerd_helpers

CRI_NS=k8s.io
BARE_IMAGE=localhost/qpod-test/bare:test

setup_file() {
	need_containerd
	cd_setup_dir
	mkdir -p "$CD_DIR/cni/bin" "$CD_DIR/cni/net.d"
	local p
	for p in loopback bridge host-local; do
		ln -s "/usr/lib/cni/$p" "$CD_DIR/cni/bin/$p"
	done
	cat >"$CD_DIR/cni/net.d/10-qpod-test.conflist" <<-EOF
		{
		  "cniVersion": "0.4.0",
		  "name": "qpod-test",
		  "plugins": [{"type": "bridge", "bridge": "qpcri0", "isGateway": true, "ipMasq": false,
		    "ipam": {"type": "host-local", "subnet": "10.255.255.0/24", "routes": [{"dst": "0.0.0.0/0"}],
		             "dataDir": "$CD_DIR/cni/ipam"}}]
		}
	EOF
	CD_NETNS=qpcri-$CD_NS
	export CD_NETNS
	ip netns add "$CD_NETNS"
	ip -n "$CD_NETNS" link set lo up
	{
		cd_config_head
		cat <<-EOF

			[plugins."io.containerd.grpc.v1.cri"]
			  sandbox_image = "$PAUSE_IMAGE"
			  # the streaming server (Exec/Attach/PortForward) on loopback only
			  stream_server_address = "127.0.0.1"
			  stream_server_port = "0"
			  # no profile is loaded into the host's AppArmor
			  disable_apparmor = true
			  # root without CAP_SYS_RESOURCE (this machine) cannot give the
			  # sandbox its default oom_score_adj of -998
			  restrict_oom_score_adj = true
			  # pod network namespaces under the private state dir, not /run/netns
			  netns_mounts_under_state_dir = true

			  [plugins."io.containerd.grpc.v1.cri".containerd]
			    snapshotter = "overlayfs"
			    default_runtime_name = "qpod"

			    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.qpod]
			      runtime_type = "io.containerd.runc.v2"
			      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.qpod.options]
			        BinaryName = "$QPOD"
			        Root = "$CD_DIR/qpod/qpod"

			    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.qpod-vm]
			      runtime_type = "io.containerd.runc.v2"
			      pod_annotations = ["qpod.*"]
			      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.qpod-vm.options]
			        BinaryName = "$QPOD"
			        Root = "$CD_DIR/qpod/qpod-vm"

			  [plugins."io.containerd.grpc.v1.cri".cni]
			    bin_dir = "$CD_DIR/cni/bin"
			    conf_dir = "$CD_DIR/cni/net.d"
			    max_conf_num = 1

			  [plugins."io.containerd.grpc.v1.cri".registry]
			    config_path = "$CD_DIR/certs.d"
		EOF
	} >"$CD_CONFIG"
	mk_oci_image "$ROOTFS" "$CD_DIR/busybox.tar" "$IMAGE"
	# images as a real node has them: the pause image's layer holds only
	# /pause (containerd runs it with a read-only root), and an app image
	# without /dev, /proc and /sys
	mkdir -p "$CD_DIR/pause-root" "$CD_DIR/bare-root"
	cp "$ROOTFS$HELPER" "$CD_DIR/pause-root/pause"
	mk_oci_image "$CD_DIR/pause-root" "$CD_DIR/pause.tar" "$PAUSE_IMAGE" '["/pause", "sleep", "86400"]'
	tar -C "$ROOTFS" --exclude=./dev --exclude=./proc --exclude=./sys -cf - . | tar -C "$CD_DIR/bare-root" -xf -
	mk_oci_image "$CD_DIR/bare-root" "$CD_DIR/bare.tar" "$BARE_IMAGE"
	cd_start
	ctr -a "$CD_SOCK" -n "$CRI_NS" images import "$CD_DIR/busybox.tar" >/dev/null
	ctr -a "$CD_SOCK" -n "$CRI_NS" images import "$CD_DIR/pause.tar" >/dev/null
	ctr -a "$CD_SOCK" -n "$CRI_NS" images import "$CD_DIR/bare.tar" >/dev/null
}

teardown_file() {
	cd_teardown_file
}

setup() {
	setup_common
	# teardown_common checks qpod's state roots of both handlers
	ROOT=$CD_DIR/qpod/qpod/$CRI_NS
	mkdir -p "$TEST_DIR/logs"
	SANDBOXES=()
}

teardown() {
	local s rc=0 gone
	# every sandbox of the test (by its uid) through the CRI, as kubelet
	# would; where that fails, the sandbox's shim is killed (a runtime that
	# hangs or crashes) and the CRI is asked again
	for s in $(CRI_DEADLINE=10 cri ListPodSandbox 2>/dev/null |
		jq -r --arg u "$PREFIX" '.items[] | select(.metadata.uid == $u) | .id'); do
		if ! remove_sandbox "$s"; then
			echo "teardown: the CRI could not remove sandbox $s: killing its shim" >&2
			rc=1
			kill_shims "$s"
			gone=false
			sleep 1
			remove_sandbox "$s" && gone=true
			if ! $gone; then
				echo "teardown: the CRI did not remove sandbox $s: unmounting its shm and netns" >&2
				force_unmount_sandbox "$s"
			fi
		fi
	done
	teardown_common || rc=1
	ROOT=$CD_DIR/qpod/qpod-vm/$CRI_NS teardown_vm_root || rc=1
	no_leftovers cri_test_leftovers || rc=1
	return $rc
}

# remove_sandbox ID: its containers (stop, remove), then the sandbox; short
# deadlines
remove_sandbox() {
	local s=$1 c
	for c in $(CRI_DEADLINE=10 cri ListContainers "{\"filter\": {\"pod_sandbox_id\": \"$s\"}}" 2>/dev/null |
		jq -r '.containers[].id'); do
		CRI_DEADLINE=10 cri StopContainer "{\"container_id\": \"$c\", \"timeout\": 1}" >/dev/null 2>&1 || return 1
		CRI_DEADLINE=10 cri RemoveContainer "{\"container_id\": \"$c\"}" >/dev/null 2>&1 || return 1
	done
	CRI_DEADLINE=10 cri StopPodSandbox "{\"pod_sandbox_id\": \"$s\"}" >/dev/null 2>&1 || return 1
	CRI_DEADLINE=10 cri RemovePodSandbox "{\"pod_sandbox_id\": \"$s\"}" >/dev/null 2>&1 || return 1
}

# force_unmount_sandbox SANDBOX: the mounts the CRI made for it
force_unmount_sandbox() {
	local m
	for m in $(cd_mounts "$1"); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for m in $(cat "$TEST_DIR/netns.$1" 2>/dev/null); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		rm -f "$m"
	done
}

# kill_shims SANDBOX: SIGKILL to the shim of the sandbox (all the pod's
# containers share it), so that containerd sees every task of it exit
kill_shims() {
	local pid i
	for pid in $(shim_pids "$1"); do
		kill -KILL "$pid" 2>/dev/null
	done
	for i in $(seq 1 50); do
		[ -z "$(shim_pids "$1")" ] && break
		sleep 0.1
	done
	rm -f "$(shim_socket "$CRI_NS" "$1")"
}

# qpod pods left in the vm handler's root: force-delete, and say so
teardown_vm_root() {
	local id rc=0
	[ -d "$ROOT" ] || return 0
	for id in $(cd "$ROOT" && ls); do
		echo "teardown: pod $id left in $ROOT" >&2
		"$QPOD" --root "$ROOT" delete --force "$id" >/dev/null 2>&1
		rc=1
	done
	return $rc
}

# shims, mounts, cgroups of the test's sandboxes
cri_test_leftovers() {
	local s m pid
	for s in "${SANDBOXES[@]}"; do
		m=$(shim_socket "$CRI_NS" "$s")
		[ -e "$m" ] && echo "shim socket left: $m (sandbox $s)"
		for pid in $(cd_procs "$s"); do
			echo "process left: $(proc_desc "$pid")"
		done
		for m in $(cd_mounts "$s"); do
			echo "mount left: $m"
		done
	done
	for m in /sys/fs/cgroup/*/"$CD_NS"/* /sys/fs/cgroup/"$CD_NS"/*; do
		[ -d "$m" ] && echo "cgroup left: $m"
	done
	for m in $(cd_mounts "$CD_DIR/state/netns"); do
		echo "network namespace left: $m"
	done
	return 0
}

# ---- the client ----------------------------------------------------------------

# cri METHOD [JSON]: one CRI call (deadline $CRI_DEADLINE s, default 55);
# the response JSON on stdout
cri() {
	local d=${CRI_DEADLINE:-55}
	timeout -k 5 $((d + 5)) "$CD_PY" "$CRI_PY" -s "$CD_SOCK" --gen "$CD_DIR/gen" --timeout "$d" "$@"
}

# pod_config HANDLER PID-MODE [N]: a PodSandboxConfig as kubelet sends it
# (its uid is $PREFIX, its cgroup parent /$CD_NS; N: the test's Nth pod,
# named $PREFIX-pod, $PREFIX-pod1, ...)
pod_config() {
	local handler=$1 pidmode=${2:-CONTAINER} n=${3:-} ann='{}'
	[ "$handler" = qpod-vm ] && ann='{"qpod.mode": "vm"}'
	jq -cn --arg name "$PREFIX-pod$n" --arg uid "$PREFIX" --arg logs "$TEST_DIR/logs" \
		--arg cg "/$CD_NS" --arg pid "$pidmode" --argjson ann "$ann" '{
		metadata: {name: $name, uid: $uid, namespace: "qpod-test", attempt: 0},
		hostname: "qpod-cri-pod", log_directory: $logs,
		labels: {"qpod.test": "cri"}, annotations: $ann,
		linux: {cgroup_parent: $cg,
			security_context: {namespace_options: {network: "POD", pid: $pid, ipc: "POD"}}}}'
}

# container_config NAME PID-MODE ARGS...: a ContainerConfig of $IMAGE
container_config() {
	local name=$1 pidmode=$2
	shift 2
	jq -cn --arg name "$name" --arg image "$IMAGE" --arg pid "$pidmode" --argjson cmd "$(json_args "$@")" '{
		metadata: {name: $name, attempt: 0}, image: {image: $image},
		command: $cmd, log_path: ($name + ".log"),
		envs: [{key: "QPOD_TEST", value: "cri"}],
		linux: {security_context: {namespace_options: {network: "POD", pid: $pid, ipc: "POD"}}}}'
}

# json_args ARGS...: the arguments as a JSON array of strings (jq 1.6 takes
# an argument such as "-c" after --args for its own option)
json_args() {
	[ $# -gt 0 ] || { echo '[]'; return; }
	printf '%s\n' "$@" | jq -R . | jq -sc .
}

# run_sandbox HANDLER [PID-MODE] [N]: $SANDBOX, $POD_CONFIG
run_sandbox() {
	POD_CONFIG=$(pod_config "$1" "${2:-CONTAINER}" "${3:-}")
	run --separate-stderr cri RunPodSandbox "{\"config\": $POD_CONFIG, \"runtime_handler\": \"$1\"}"
	assert_status 0
	SANDBOX=$(jq -r .pod_sandbox_id <<<"$output")
	assert_match "$SANDBOX" '^[0-9a-f]{64}$' "pod_sandbox_id"
	SANDBOXES+=("$SANDBOX")
	record_shim "$CRI_NS" "$SANDBOX"
	# its network namespace, for a forced cleanup
	cri PodSandboxStatus "{\"pod_sandbox_id\": \"$SANDBOX\", \"verbose\": true}" |
		jq -r '.info.info | fromjson | .runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' \
			>"$TEST_DIR/netns.$SANDBOX" 2>/dev/null
	cat "$TEST_DIR/netns.$SANDBOX" >>"$CD_DIR/netns.list"
}

# create_container_cfg CONFIG: that ContainerConfig (JSON) in $SANDBOX: $CONTAINER
create_container_cfg() {
	run --separate-stderr cri CreateContainer \
		"{\"pod_sandbox_id\": \"$SANDBOX\", \"config\": $1, \"sandbox_config\": $POD_CONFIG}"
	assert_status 0
	CONTAINER=$(jq -r .container_id <<<"$output")
	assert_match "$CONTAINER" '^[0-9a-f]{64}$' "container_id"
}

# create_container NAME PID-MODE ARGS...: $CONTAINER
create_container() { create_container_cfg "$(container_config "$@")"; }

# start_container [ID]: StartContainer of ID (default $CONTAINER), answered without error
start_container() {
	run --separate-stderr cri StartContainer "{\"container_id\": \"${1:-$CONTAINER}\"}"
	assert_status 0
}

container_state() { # ID
	cri ContainerStatus "{\"container_id\": \"$1\"}" | jq -r .status.state
}

container_state_is() { [ "$(container_state "$1")" = "$2" ]; }

sandbox_ip() { # ID: the pod IP the CRI reports
	cri PodSandboxStatus "{\"pod_sandbox_id\": \"$1\"}" | jq -r .status.network.ip
}

sandbox_state() { # ID
	cri PodSandboxStatus "{\"pod_sandbox_id\": \"$1\"}" | jq -r .status.state
}

exec_sync() { # ID TIMEOUT ARGS...: ExecSync; the response JSON
	local id=$1 t=$2
	shift 2
	cri ExecSync "$(jq -cn --arg id "$id" --argjson t "$t" --argjson cmd "$(json_args "$@")" '{container_id: $id, cmd: $cmd, timeout: $t}')"
}

now_ms() { date +%s%3N; }

# StopContainer (1 s) and RemoveContainer of ID, each answered without error
stop_and_remove_container() { # ID
	run --separate-stderr cri StopContainer "{\"container_id\": \"$1\", \"timeout\": 1}"
	assert_status 0
	run --separate-stderr cri RemoveContainer "{\"container_id\": \"$1\"}"
	assert_status 0
}

# StopPodSandbox and RemovePodSandbox of ID, each answered without error
stop_and_remove_sandbox() { # ID
	run --separate-stderr cri StopPodSandbox "{\"pod_sandbox_id\": \"$1\"}"
	assert_status 0
	run --separate-stderr cri RemovePodSandbox "{\"pod_sandbox_id\": \"$1\"}"
	assert_status 0
}

# RemoveContainer $CONTAINER, then the sandbox $SANDBOX stopped and
# removed, each answered without error
remove_container_and_sandbox() {
	run --separate-stderr cri RemoveContainer "{\"container_id\": \"$CONTAINER\"}"
	assert_status 0
	stop_and_remove_sandbox "$SANDBOX"
}

# ---- scenarios ---------------------------------------------------------------------

# the whole lifecycle with a workload that ends on SIGTERM with status 7
scenario_lifecycle() { # HANDLER
	local handler=$1 mode=container t0 t1 out
	[ "$handler" = qpod-vm ] && mode=vm && need_vm
	run_sandbox "$handler"
	run --separate-stderr cri PodSandboxStatus "{\"pod_sandbox_id\": \"$SANDBOX\"}"
	assert_status 0
	jq -e --arg h "$handler" '.status.state == "SANDBOX_READY" and .status.runtime_handler == $h
		and (.status.network.ip | startswith("10.255.255."))' <<<"$output" >/dev/null ||
		flunk "PodSandboxStatus:" "$output"

	create_container work CONTAINER sh -c \
		'trap "echo got-term; exit 7" TERM; echo "started $QPOD_TEST"; while :; do sleep 0.1; done'
	assert_eq "$(container_state "$CONTAINER")" CONTAINER_CREATED "state after CreateContainer"
	start_container
	assert_eq "$(container_state "$CONTAINER")" CONTAINER_RUNNING "state after StartContainer"
	wait_for 200 grep -q "stdout F started cri" "$TEST_DIR/logs/work.log"

	# ExecSync: stdout, stderr, exit status; the kernel tells the mode
	run --separate-stderr exec_sync "$CONTAINER" 20 sh -c 'echo out; uname -r; echo err >&2; exit 3'
	assert_status 0
	out=$output
	assert_eq "$(jq -r .exit_code <<<"$out")" 3 "ExecSync exit_code"
	assert_eq "$(jq -c .stderr <<<"$out")" '"err\n"' "ExecSync stderr"
	assert_eq "$(jq -r .stdout <<<"$out" | sed -n 1p)" out "ExecSync stdout"
	if [ "$mode" = vm ]; then
		[ "$(jq -r .stdout <<<"$out" | sed -n 2p)" != "$(uname -r)" ] || flunk "uname -r in a qpod-vm pod is the host's"
	else
		assert_eq "$(jq -r .stdout <<<"$out" | sed -n 2p)" "$(uname -r)" "uname -r in a container pod"
		# the pod's network: eth0 with the address CNI gave the sandbox
		run --separate-stderr exec_sync "$CONTAINER" 20 ip -o -4 addr show eth0
		assert_status 0
		assert_contains "$(jq -r .stdout <<<"$output")" "$(sandbox_ip "$SANDBOX")/24" "eth0 of the pod"
	fi

	# ContainerStats
	run --separate-stderr cri ContainerStats "{\"container_id\": \"$CONTAINER\"}"
	assert_status 0
	jq -e --arg id "$CONTAINER" '.stats.attributes.id == $id
		and (.stats.cpu.usage_core_nano_seconds.value | tonumber) > 0
		and (.stats.memory.working_set_bytes.value | tonumber) > 0' <<<"$output" >/dev/null ||
		flunk "ContainerStats without cpu and memory usage:" "$output"

	# StopContainer: SIGTERM, the trap exits 7; well within 30 s
	t0=$(now_ms)
	CRI_DEADLINE=35 run --separate-stderr cri StopContainer "{\"container_id\": \"$CONTAINER\", \"timeout\": 20}"
	t1=$(now_ms)
	assert_status 0
	[ $((t1 - t0)) -lt 30000 ] || flunk "StopContainer took $((t1 - t0)) ms"
	run --separate-stderr cri ContainerStatus "{\"container_id\": \"$CONTAINER\"}"
	jq -e '.status.state == "CONTAINER_EXITED" and .status.exit_code == 7' <<<"$output" >/dev/null ||
		flunk "ContainerStatus after StopContainer: expected exited with 7:" "$output"
	grep -q "stdout F got-term" "$TEST_DIR/logs/work.log" || flunk "no got-term in the log:" "$(cat "$TEST_DIR/logs/work.log")"

	run --separate-stderr cri RemoveContainer "{\"container_id\": \"$CONTAINER\"}"
	assert_status 0
	run --separate-stderr cri ListContainers "{\"filter\": {\"pod_sandbox_id\": \"$SANDBOX\"}}"
	assert_status 0
	assert_eq "$(jq '.containers | length' <<<"$output")" 0 "containers after RemoveContainer"

	run --separate-stderr cri StopPodSandbox "{\"pod_sandbox_id\": \"$SANDBOX\"}"
	assert_status 0
	assert_eq "$(sandbox_state "$SANDBOX")" SANDBOX_NOTREADY "sandbox after StopPodSandbox"
	run --separate-stderr cri RemovePodSandbox "{\"pod_sandbox_id\": \"$SANDBOX\"}"
	assert_status 0
	run --separate-stderr cri ListPodSandbox
	assert_status 0
	assert_not_contains "$output" "$SANDBOX" "sandboxes after RemovePodSandbox"
}

# what the CRI gives every container of a pod: the pod's hostname, its
# /etc/hosts and /etc/resolv.conf (bind mounts from the sandbox's dir)
scenario_pod_files() { # HANDLER
	local handler=$1
	[ "$handler" = qpod-vm ] && need_vm
	run_sandbox "$handler"
	create_container files CONTAINER sh -c 'echo ready; while :; do sleep 0.1; done'
	start_container
	wait_for 200 grep -q "stdout F ready" "$TEST_DIR/logs/files.log"
	run --separate-stderr exec_sync "$CONTAINER" 20 sh -c 'hostname; cat /etc/hostname'
	assert_status 0
	assert_eq "$(jq -r .stdout <<<"$output" | sed -n 1,2p | tr '\n' ' ')" "qpod-cri-pod qpod-cri-pod " "hostname, /etc/hostname"
	# the sandbox's hosts and resolv.conf (containerd 1.6 copies the host's;
	# DNSConfig was not given)
	local f dir=$CD_DIR/root/io.containerd.grpc.v1.cri/sandboxes/$SANDBOX
	for f in hosts resolv.conf; do
		run --separate-stderr exec_sync "$CONTAINER" 20 cat "/etc/$f"
		assert_status 0
		assert_eq "$(jq -r .stdout <<<"$output")" "$(cat "$dir/$f")" "/etc/$f"
	done
}

# StopContainer of a workload that ignores SIGTERM: SIGKILL after the timeout
scenario_stop_kill() { # HANDLER
	local handler=$1 t0 t1
	[ "$handler" = qpod-vm ] && need_vm
	run_sandbox "$handler"
	create_container stubborn CONTAINER sh -c 'trap "" TERM; echo ready; while :; do sleep 0.1; done'
	start_container
	wait_for 200 grep -q "stdout F ready" "$TEST_DIR/logs/stubborn.log"
	t0=$(now_ms)
	CRI_DEADLINE=35 run --separate-stderr cri StopContainer "{\"container_id\": \"$CONTAINER\", \"timeout\": 2}"
	t1=$(now_ms)
	assert_status 0
	[ $((t1 - t0)) -ge 1500 ] || flunk "StopContainer returned after $((t1 - t0)) ms: the TERM was not ignored?"
	[ $((t1 - t0)) -lt 30000 ] || flunk "StopContainer took $((t1 - t0)) ms"
	run --separate-stderr cri ContainerStatus "{\"container_id\": \"$CONTAINER\"}"
	jq -e '.status.state == "CONTAINER_EXITED" and .status.exit_code == 137' <<<"$output" >/dev/null ||
		flunk "ContainerStatus after StopContainer: expected exited with 137 (SIGKILL):" "$output"
	remove_container_and_sandbox
}

# tty: true (what kubectl run -t asks): the workload on a terminal, its
# output in the container's log (ExecSync with a tty and the streaming
# server's Exec/Attach are not driven: this client has no streaming)
scenario_tty() { # HANDLER
	local handler=$1
	[ "$handler" = qpod-vm ] && need_vm
	run_sandbox "$handler"
	local cfg
	cfg=$(container_config term CONTAINER sh -c '[ -t 0 ] && [ -t 1 ] && echo "on-a-tty $(tty)"; exit 5' | jq -c '.tty = true')
	create_container_cfg "$cfg"
	start_container
	wait_for 600 grep -Eq "stdout F on-a-tty /dev/pts/[0-9]+" "$TEST_DIR/logs/term.log"
	wait_for 200 container_state_is "$CONTAINER" CONTAINER_EXITED
	run --separate-stderr cri ContainerStatus "{\"container_id\": \"$CONTAINER\"}"
	jq -e '.status.exit_code == 5' <<<"$output" >/dev/null || flunk "ContainerStatus: expected exit code 5:" "$output"
	remove_container_and_sandbox
}

# vm_pod_qemus: the QEMUs of the qpod-vm handler's pods (their monitors
# run with its --root)
vm_pod_qemus() { qemus_of_root "$CD_DIR/qpod/qpod-vm/$CRI_NS"; }

# one VM per pod: two containers of a qpod-vm pod (an HTTP server and its
# client on 127.0.0.1) in the sandbox's one VM, each with its own rootfs
# (the client's from an image without /dev, /proc, /sys, read-only), its
# own limits, its own exit status; a stopped container's next attempt runs
# in the same VM
scenario_vm_pod_containers() {
	need_vm
	run_sandbox qpod-vm
	local qemus web cfg
	qemus=$(vm_pod_qemus)
	assert_eq "$(wc -w <<<"$qemus")" 1 "QEMUs after RunPodSandbox"
	create_container web CONTAINER sh -c \
		'mkdir -p /tmp/www && echo "pod-local $(hostname)" >/tmp/www/index.html && echo ready && exec httpd -f -p 127.0.0.1:8080 -h /tmp/www'
	web=$CONTAINER
	start_container "$web"
	wait_for 300 grep -q "stdout F ready" "$TEST_DIR/logs/web.log"
	cfg=$(container_config client CONTAINER sh -c \
		'wget -qO- http://127.0.0.1:8080/; cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup); echo "mem $(cat $cg/memory.max) pids $(cat $cg/pids.max)"; ls -d /proc/self /dev/null; touch /ro-test 2>/dev/null || echo read-only; exit 4' |
		jq -c --arg i "$BARE_IMAGE" '.image.image = $i | .linux.resources = {memory_limit_in_bytes: 67108864}
			| .linux.security_context.readonly_rootfs = true')
	create_container_cfg "$cfg"
	start_container
	wait_for 300 container_state_is "$CONTAINER" CONTAINER_EXITED
	run --separate-stderr cri ContainerStatus "{\"container_id\": \"$CONTAINER\"}"
	jq -e '.status.exit_code == 4' <<<"$output" >/dev/null || flunk "the client's exit code: expected 4:" "$output"
	local log
	log=$(cat "$TEST_DIR/logs/client.log")
	assert_contains "$log" "stdout F pod-local qpod-cri-pod" "the server answered on 127.0.0.1 with the pod's hostname"
	assert_contains "$log" "stdout F mem 67108864 pids max" "the client's own limits, read in it"
	assert_contains "$log" "stdout F /dev/null" "/dev in a root without it"
	assert_contains "$log" "stdout F /proc/self" "/proc in a root without it"
	assert_contains "$log" "stdout F read-only" "the client's root is read-only"
	assert_eq "$(vm_pod_qemus)" "$qemus" "QEMUs with two containers: the sandbox's alone"
	# the web server stopped (TERM), its next attempt in the same VM
	run --separate-stderr cri StopContainer "{\"container_id\": \"$web\", \"timeout\": 10}"
	assert_status 0
	assert_eq "$(container_state "$web")" CONTAINER_EXITED "web after StopContainer"
	cfg=$(container_config web CONTAINER sh -c 'echo attempt-1; exec sleep 1000' | jq -c '.metadata.attempt = 1')
	create_container_cfg "$cfg"
	start_container
	wait_for 300 grep -q "stdout F attempt-1" "$TEST_DIR/logs/web.log"
	assert_eq "$(vm_pod_qemus)" "$qemus" "QEMUs after the new attempt"
}

# faults under the CRI: SIGKILL of a container's keeper (the pid the shim
# holds) ends that container, EXITED; SIGKILL of the pod's QEMU ends the
# other; the client's stop and remove then leave nothing (teardown checks)
scenario_vm_pod_faults() {
	need_vm
	local vmroot=$CD_DIR/qpod/qpod-vm/$CRI_NS a b
	run_sandbox qpod-vm
	create_container a CONTAINER sh -c 'echo ready; exec sleep 1001'
	a=$CONTAINER
	start_container "$a"
	create_container b CONTAINER sh -c 'echo ready; exec sleep 1002'
	b=$CONTAINER
	start_container "$b"
	wait_for 300 grep -q "stdout F ready" "$TEST_DIR/logs/b.log"
	kill -KILL "$("$QPOD" --root "$vmroot" state "$a" | jq -r .pid)"
	wait_for 300 container_state_is "$a" CONTAINER_EXITED
	run --separate-stderr cri ContainerStatus "{\"container_id\": \"$a\"}"
	jq -e '.status.exit_code == 137' <<<"$output" >/dev/null || flunk "a after its keeper's SIGKILL:" "$output"
	assert_eq "$(container_state "$b")" CONTAINER_RUNNING "b after a's keeper was killed"
	kill -KILL "$("$QPOD" --root "$vmroot" state "$SANDBOX" | jq -r .vmm_pid)"
	wait_for 300 container_state_is "$b" CONTAINER_EXITED
	for CONTAINER in "$a" "$b"; do
		stop_and_remove_container "$CONTAINER"
	done
	stop_and_remove_sandbox "$SANDBOX"
	run --separate-stderr "$QPOD" --root "$vmroot" gc
	assert_status 0
	assert_eq "$(ls "$vmroot")" "" "qpod state left in the handler's root"
}

# ---- tests ---------------------------------------------------------------------------

@test "cri: Version and Status through the runtime.v1 client" {
	run --separate-stderr cri Version
	assert_status 0
	jq -e '.runtime_api_version == "v1" and .runtime_name == "containerd"' <<<"$output" >/dev/null ||
		flunk "Version:" "$output"
	run --separate-stderr cri Status
	assert_status 0
	jq -e '[.status.conditions[] | select(.status == true) | .type] | index("RuntimeReady") and index("NetworkReady")' \
		<<<"$output" >/dev/null || flunk "Status: runtime or network not ready:" "$output"
	run --separate-stderr cri ListImages
	assert_status 0
	jq -e --arg i "$IMAGE" --arg p "$PAUSE_IMAGE" '[.images[].repo_tags[]] | index($i) and index($p)' \
		<<<"$output" >/dev/null || flunk "ListImages: test images missing:" "$output"
	run --separate-stderr cri NoSuchMethod
	assert_status 2
}

@test "cri: sandbox, container, exec, stats, stop, remove (qpod)" { scenario_lifecycle qpod; }
@test "cri: sandbox, container, exec, stats, stop, remove (qpod-vm)" { scenario_lifecycle qpod-vm; }
@test "cri: StopContainer kills a container that ignores SIGTERM (qpod)" { scenario_stop_kill qpod; }
@test "cri: the pod's hostname, /etc/hosts, /etc/resolv.conf in a container (qpod)" { scenario_pod_files qpod; }
@test "cri: the pod's hostname, /etc/hosts, /etc/resolv.conf in a container (qpod-vm)" { scenario_pod_files qpod-vm; }
@test "cri: StopContainer kills a container that ignores SIGTERM (qpod-vm)" { scenario_stop_kill qpod-vm; }
@test "cri: tty: true: the workload on a terminal, its output in the log, its exit status (qpod)" { scenario_tty qpod; }
@test "cri: tty: true: the workload on a terminal, its output in the log, its exit status (qpod-vm)" { scenario_tty qpod-vm; }

@test "cri: one VM per pod: two containers of a qpod-vm pod in its VM, over 127.0.0.1, each its limits and exit status" {
	scenario_vm_pod_containers
}

@test "cri: one VM per pod: SIGKILL of a container's keeper, then of the pod's QEMU; stop and remove leave nothing" {
	scenario_vm_pod_faults
}

@test "cri: shareProcessNamespace (pid = POD): the container sees the sandbox's processes" {
	run_sandbox qpod POD
	create_container shared POD sh -c 'echo ready; exec sleep 1001'
	start_container
	wait_for 200 grep -q "stdout F ready" "$TEST_DIR/logs/shared.log"
	run --separate-stderr exec_sync "$CONTAINER" 20 ps -o pid,args
	assert_status 0
	local ps
	ps=$(jq -r .stdout <<<"$output")
	assert_contains "$ps" "/pause sleep 86400" "ps in the container shows the sandbox's pause process"
	assert_contains "$ps" "sleep 1001" "ps in the container shows its own workload"
	# the sandbox's process is PID 1 of the shared namespace
	assert_match "$(awk '$1 == 1' <<<"$ps")" '/pause sleep 86400' "PID 1 of the pod"
	# and another container of the pod sees this one
	local first=$CONTAINER
	create_container second POD sh -c 'echo ready; exec sleep 1002'
	start_container
	wait_for 200 grep -q "stdout F ready" "$TEST_DIR/logs/second.log"
	run --separate-stderr exec_sync "$CONTAINER" 20 ps -o pid,args
	assert_status 0
	assert_contains "$(jq -r .stdout <<<"$output")" "sleep 1001" "the second container sees the first"
	run --separate-stderr cri StopContainer "{\"container_id\": \"$first\", \"timeout\": 5}"
	assert_status 0
}

# what the pods left in containerd's namespace: the bridge's ports (veths),
# host-local's leases (files named by address)
pod_net_leftovers() {
	ip -n "$CD_NETNS" -o link show master qpcri0 2>/dev/null
	ls "$CD_DIR/cni/ipam/qpod-test" 2>/dev/null | grep '^10\.' || true
}

@test "cri: a qpod-vm pod's CNI address (bridge plugin) is its guest's: a client reaches its HTTP server, it reaches the gateway and a second pod; nothing left after removal" {
	need_vm
	local a b ip_a ip_b web
	run_sandbox qpod-vm CONTAINER
	a=$SANDBOX
	# a container of the pod (inside the pod's VM) serves HTTP on the pod's
	# network
	create_container web CONTAINER sh -c \
		'mkdir -p /tmp/www && echo "served by $(hostname) in the guest" >/tmp/www/index.html && echo ready && exec httpd -f -p 8080 -h /tmp/www'
	web=$CONTAINER
	start_container "$web"
	wait_for 300 grep -q "stdout F ready" "$TEST_DIR/logs/web.log"
	run_sandbox qpod-vm CONTAINER 1
	b=$SANDBOX
	ip_a=$(sandbox_ip "$a")
	ip_b=$(sandbox_ip "$b")
	assert_match "$ip_a" '^10\.255\.255\.[0-9]+$' "pod IP of the first pod"
	assert_match "$ip_b" '^10\.255\.255\.[0-9]+$' "pod IP of the second pod"
	# the pod IP is on the guest's eth0 (as the container sees it), with the
	# default route via the bridge
	run --separate-stderr exec_sync "$web" 20 sh -c 'ip -4 -o addr show eth0; ip route'
	assert_status 0
	assert_contains "$(jq -r .stdout <<<"$output")" "inet $ip_a/24"
	assert_contains "$(jq -r .stdout <<<"$output")" "default via 10.255.255.1 dev eth0"
	# the container's HTTP server answers a client in containerd's namespace
	wait_for 400 nsenter --net="/run/netns/$CD_NETNS" curl -sf -m 5 -o "$TEST_DIR/got" "http://$ip_a:8080/"
	assert_eq "$(cat "$TEST_DIR/got")" "served by qpod-cri-pod in the guest" "the guest's answer"
	# the container reaches the gateway and the other pod's guest
	run --separate-stderr exec_sync "$web" 20 ping -c 1 -W 5 10.255.255.1
	assert_status 0
	assert_eq "$(jq -r .exit_code <<<"$output")" 0 "ping of the gateway"
	run --separate-stderr exec_sync "$web" 20 ping -c 1 -W 5 "$ip_b"
	assert_status 0
	assert_eq "$(jq -r .exit_code <<<"$output")" 0 "ping of the other pod"
	stop_and_remove_container "$web"
	# removal: no veth on the bridge, no lease
	for SANDBOX in "$a" "$b"; do
		stop_and_remove_sandbox "$SANDBOX"
	done
	assert_eq "$(pod_net_leftovers)" "" "veths or leases left"
}

@test "docs/containerd.md: the containerd snippet and the RuntimeClass YAML parse" {
	local doc=$REPO/docs/containerd.md
	[ -f "$doc" ] || flunk "$doc is missing"
	# the one ```toml block: containerd must load it
	awk '/^```toml$/ { p = 1; next } /^```$/ { p = 0 } p' "$doc" >"$TEST_DIR/doc.toml"
	[ -s "$TEST_DIR/doc.toml" ] || flunk "no \`\`\`toml block in $doc"
	run --separate-stderr containerd --config "$TEST_DIR/doc.toml" config dump
	assert_status 0
	printf '%s\n' "$output" >"$TEST_DIR/dump.toml"
	# and the dump has both handlers as the doc means them
	run --separate-stderr "$CD_PY" - "$TEST_DIR/dump.toml" <<-'EOF'
		import sys, tomllib
		cfg = tomllib.load(open(sys.argv[1], "rb"))
		cri = cfg["plugins"]["io.containerd.grpc.v1.cri"]
		rts = cri["containerd"]["runtimes"]
		for name in ("qpod", "qpod-vm"):
		    rt = rts[name]
		    assert rt["runtime_type"] == "io.containerd.runc.v2", (name, rt)
		    assert rt["options"]["BinaryName"].endswith("/qpod"), (name, rt["options"])
		    assert rt["options"]["Root"], (name, rt["options"])
		assert "qpod.*" in rts["qpod-vm"]["pod_annotations"], rts["qpod-vm"]
		assert rts["qpod"]["options"]["Root"] != rts["qpod-vm"]["options"]["Root"]
		print("ok")
	EOF
	assert_status 0
	assert_eq "$output" ok "toml check"
	# the ```yaml blocks: RuntimeClasses whose handlers are the toml's
	# runtimes, and a pod that asks for a microVM
	awk '/^```yaml$/ { p = 1; print "---"; next } /^```$/ { p = 0 } p' "$doc" >"$TEST_DIR/doc.yaml"
	run --separate-stderr "$CD_PY" - "$TEST_DIR/doc.yaml" "$TEST_DIR/dump.toml" <<-'EOF'
		import sys, tomllib, yaml
		docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
		rts = tomllib.load(open(sys.argv[2], "rb"))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
		rcs = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "RuntimeClass"}
		assert set(rcs) == {"qpod", "qpod-vm"}, sorted(rcs)
		for name, rc in rcs.items():
		    assert rc["apiVersion"] == "node.k8s.io/v1", rc
		    assert rc["handler"] in rts, (rc["handler"], sorted(rts))
		pods = [d for d in docs if d.get("kind") == "Pod"]
		vm = [p for p in pods if p["spec"].get("runtimeClassName") == "qpod-vm"]
		assert vm, "no Pod example with runtimeClassName qpod-vm"
		for p in vm:
		    assert p["metadata"]["annotations"]["qpod.mode"] == "vm", p["metadata"]
		print("ok")
	EOF
	assert_status 0
	assert_eq "$output" ok "yaml check"
}

@test "containerd (CRI) stops on SIGTERM and leaves nothing behind" {
	run cd_cleanup
	assert_status 0
	assert_eq "$output" "" "cleanup found"
	! alive "$CD_PID" || flunk "containerd $CD_PID still runs"
	[ ! -e "$CD_DIR" ] || flunk "$CD_DIR not removed"
}
