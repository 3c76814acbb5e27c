#!/usr/bin/env bats
# tests/cli/podman.bats — podman 4.3 (Debian's podman + conmon) as a real
# client of qpod: run --rm, exit statuses, --read-only/-v/--tmpfs, run -d +
# exec, kill, cgroup limits, exec -it and run -it on a terminal
# (tests/cli/ptyrun.py), stop, rm, pause/unpause, top/ps inside the pod; then
# microVM pods chosen with `podman run --annotation qpod.mode=vm`: run --rm,
# run -d + stop + rm, exec, top, run -it.
#
# Everything podman touches is private to the test's directory $PT:
# --root/--runroot/--tmpdir, vfs storage, a containers.conf (CONTAINERS_CONF,
# which replaces every other containers.conf) with file locks (not the
# /dev/shm/libpod_lock segment), the file events backend, its own CNI config
# dir, conmon's TMPDIR (its console sockets), and a storage.conf
# (CONTAINERS_STORAGE_CONF). Every container gets --network none and a cgroup
# parent of its own (/$CGPARENT); the image is `podman import`ed from the
# busybox test rootfs (no registry).
#
# What podman 4.3 does with the OCI runtime (seen with --log-level debug and a
# runtime wrapper that logs its argv; docs/clients.md has the whole story):
#   - `--runtime PATH` runs PATH for create (through conmon: `create --bundle B
#     --pid-file F ID`, plus `--console-socket S` with -t), start, kill ID SIG,
#     pause, resume, exec (through conmon: `exec --pid-file F --process P
#     --detach [--tty --console-socket S] ID`) and `delete --force ID`.
#     It never calls `state`: conmon's pid file and exit file are its truth.
#   - `--runtime-flag root=DIR` becomes `--root=DIR` on the calls podman makes
#     itself, but NOT on the exit command conmon runs (`podman container
#     cleanup`, which does the `delete --force`): in 4.3 that delete would go
#     to the default root (/run/qpod). So the test's runtime is a two-line
#     wrapper, $PT/bin/qpod = `exec $QPOD --root $ROOT "$@"`, named qpod so
#     podman treats it as itself (podman keys some behaviour on the name).
#   - `--annotation K=V` lands in config.json's annotations unchanged, so
#     `qpod.mode=vm` selects a microVM pod with no other podman change.
#   - the rlimits podman asks for by default (nofile 1048576) need
#     CAP_SYS_RESOURCE above the caller's hard limit; the containers.conf here
#     sets nofile/nproc defaults that fit any caller (runc fails the same way
#     without them).
#   - `podman import` writes c/image's blob info cache to
#     /var/lib/containers/cache whatever --root says: the import runs in a
#     private mount namespace with a tmpfs over /var/lib.
#
# QPOD_PODMAN_RUNTIME=/usr/sbin/runc runs the same tests with runc (to check
# the tests themselves); the vm test is qpod's own and is skipped then.

# shellcheck disable=SC2016,SC2154,SC2012 # single quotes are for the pod's shell; bats sets $stderr
load helpers

IMAGE=localhost/qpod-busybox:test
PODMAN_RUNTIME=${QPOD_PODMAN_RUNTIME:-$QPOD}

setup() {
	command -v podman >/dev/null || skip "podman is not installed (apt-get install podman)"
	command -v conmon >/dev/null || skip "conmon is not installed (apt-get install conmon)"
	setup_common
	podman_setup
}

teardown() {
	local failed=0
	podman_teardown || failed=1
	# the namespace podman ran in for a network test (its bridge goes with it)
	[ -z "${PMNS:-}" ] || ip netns del "$PMNS" 2>/dev/null || true
	teardown_common || failed=1
	return "$failed"
}

podman_setup() {
	PT=$TEST_DIR/pm
	CGPARENT=qpod-podman-$PREFIX
	mkdir -p "$PT"/{storage,run,tmp,netconf,bin}
	HOST_BEFORE=$(host_paths)
	cat >"$PT/containers.conf" <<-EOF
		[containers]
		netns = "none"
		log_driver = "k8s-file"
		default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
		[network]
		network_config_dir = "$PT/netconf"
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		events_logfile_path = "$PT/events.log"
		lock_type = "file"
		tmp_dir = "$PT/tmp"
		static_dir = "$PT/storage/libpod"
		volume_path = "$PT/storage/volumes"
		conmon_env_vars = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=$PT/tmp"]
	EOF
	cat >"$PT/storage.conf" <<-EOF
		[storage]
		driver = "vfs"
		graphroot = "$PT/storage"
		runroot = "$PT/run"
	EOF
	export CONTAINERS_CONF=$PT/containers.conf CONTAINERS_STORAGE_CONF=$PT/storage.conf
	# the runtime podman runs: qpod (or runc) with a private state dir;
	# every call is logged for the failure diagnostics
	case $PODMAN_RUNTIME in
	*/runc)
		RT_NAME=runc
		RT_ROOT=$PT/runc-state
		;;
	*)
		RT_NAME=qpod
		RT_ROOT=$ROOT
		# the accel as a user gets it: qpod's auto (the KVM probe)
		QPOD_TEST_ACCEL=${QPOD_TEST_ACCEL:-auto} vm_env
		;;
	esac
	{
		echo '#!/bin/sh'
		echo "echo \"\$*\" >>$(printf %q "$PT/runtime.log")"
		[ "$RT_NAME" = qpod ] && echo "export QPOD_KERNEL=$(printf %q "$QPOD_KERNEL") QPOD_ACCEL=$(printf %q "${QPOD_ACCEL:-}")"
		echo "exec $(printf %q "$PODMAN_RUNTIME") --root $(printf %q "$RT_ROOT") \"\$@\""
	} >"$PT/bin/$RT_NAME"
	chmod +x "$PT/bin/$RT_NAME"
	PM=(podman --root "$PT/storage" --runroot "$PT/run" --tmpdir "$PT/tmp"
		--storage-driver vfs --cgroup-manager cgroupfs --events-backend file
		--runtime "$PT/bin/$RT_NAME")
	C=$PREFIX-c
	# the image, from the test rootfs; c/image's blob info cache lands on a
	# tmpfs of a private mount namespace instead of /var/lib/containers
	tar -C "$ROOTFS" -c . |
		unshare --mount --propagation private sh -c 'mount -n -t tmpfs tmpfs /var/lib && exec "$@"' sh \
			"${PM[@]}" import --quiet - "$IMAGE" >"$PT/import.out" 2>&1 3>&- ||
		flunk "podman import failed:" "$(cat "$PT/import.out")"
}

# pm ARGS...: podman with the private everything. fd 3 is bats' own: conmon
# (forked by podman) must not hold it.
pm() {
	"${PM[@]}" "$@" 3>&-
}

# pm_run ARGS...: `podman run` with the flags every container gets
pm_run() {
	pm run --network none --cgroup-parent "/$CGPARENT" "$@"
}

# the paths podman would change on the host if something were not private
host_paths() {
	local p
	for p in /var/lib/containers /run/containers /run/libpod /etc/containers \
		/etc/cni /var/lib/cni /dev/shm/libpod_lock /run/user/0/libpod; do
		if [ -e "$p" ]; then
			echo "$p $(stat -c %Y "$p") $(ls -A "$p" 2>/dev/null | tr '\n' ' ')"
		else
			echo "$p absent"
		fi
	done
}

rt_state() { # the runtime's pod state dirs (qpod's own dot entries are not pods)
	[ -d "$RT_ROOT" ] && find "$RT_ROOT" -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f\n'
	return 0
}

pm_status() { # CONTAINER: podman's view: STATUS EXITCODE
	pm inspect "$1" --format '{{.State.Status}} {{.State.ExitCode}}'
}

pm_pid() { # CONTAINER: the pid podman got from the runtime's pid file
	pm inspect "$1" --format '{{.State.Pid}}'
}

podman_teardown() {
	[ -n "${PT:-}" ] && [ -d "$PT" ] || return 0
	local problems="" d f
	if ! pm rm --all --force --time 0 >"$PT/rm.out" 2>&1; then
		problems+="podman rm -af failed: $(cat "$PT/rm.out")"$'\n'
	fi
	# conmon's exit command (podman container cleanup) may still be running
	for _ in $(seq 1 40); do
		pgrep -f -- "$PT" >/dev/null || break
		sleep 0.1
	done
	if [ -n "$(pm ps -aq 2>/dev/null)" ]; then
		problems+="containers left: $(pm ps -a 2>&1)"$'\n'
	fi
	if [ -n "$(rt_state)" ]; then
		problems+="runtime state left in $RT_ROOT: $(rt_state | tr '\n' ' ')"$'\n'
	fi
	# the container cgroups must be gone; the parent (and conmon's) are ours
	for d in "$CGROUP_FS"/*/"$CGPARENT"; do
		[ -d "$d" ] || continue
		rmdir "$d/conmon" 2>/dev/null
		for f in "$d"/*/; do
			[ -d "$f" ] || continue
			problems+="cgroup left: $f"$'\n'
			# reported; now remove it (it is under our own parent)
			find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
		done
		rmdir "$d" 2>/dev/null || problems+="cgroup left: $d"$'\n'
	done
	if [ "$(host_paths)" != "$HOST_BEFORE" ]; then
		problems+="host paths changed:"$'\n'"$(diff <(echo "$HOST_BEFORE") <(host_paths))"$'\n'
	fi
	if [ -n "$problems" ]; then
		echo "podman teardown:" >&2
		echo "$problems" >&2
		echo "runtime calls:" >&2
		sed "s|$PT|\$PT|g" "$PT/runtime.log" >&2 2>/dev/null
		return 1
	fi
	return 0
}

# `assert_... || runtime_calls`: on a failed assertion, the runtime's calls
# say what podman asked for; still a failure
runtime_calls() {
	echo "runtime calls:" >&2
	sed "s|$PT|\$PT|g" "$PT/runtime.log" >&2 2>/dev/null
	return 1
}

# ---- container pods ------------------------------------------------------------

@test "podman run --rm: the workload's output, in a pod with loopback only" {
	run --separate-stderr pm_run --rm "$IMAGE" sh -c 'echo hello-from-podman; ls /sys/class/net'
	assert_status 0 || runtime_calls
	assert_eq "$output" $'hello-from-podman\nlo' "stdout"
	assert_eq "$(pm ps -aq)" "" "containers after run --rm"
	assert_eq "$(rt_state)" "" "runtime state after run --rm"
}

@test "podman run: the workload's exit status, 127 for a missing command, 126 for a non-executable" {
	run pm_run --rm "$IMAGE" sh -c 'exit 3'
	assert_status 3
	run --separate-stderr pm_run --rm "$IMAGE" /no/such/command
	assert_status 127
	# podman's clean-up after the failed create must succeed quietly (runc:
	# `delete --force` of a pod that is not there exits 0)
	assert_not_contains "$stderr" "after creation failed" "podman's stderr"
	run pm_run --rm "$IMAGE" /etc/passwd
	assert_status 126
	assert_eq "$(pm ps -aq)" "" "containers after run --rm"
}

@test "podman run --read-only, -v, --tmpfs: the mounts podman asks for" {
	mkdir -p "$PT/vol"
	echo from-host >"$PT/vol/in"
	run --separate-stderr pm_run --rm --read-only -v "$PT/vol:/data" --tmpfs /scratch:size=1m "$IMAGE" sh -c '
		cat /data/in; echo from-pod >/data/out
		touch /etc/x 2>/dev/null && echo rootfs-writable
		echo t >/tmp/t && echo tmp-ok
		echo s >/scratch/s && echo scratch-ok
		grep " /scratch " /proc/mounts | grep -q "size=1024k" && echo scratch-size-ok
		cat /etc/hostname >/dev/null && echo hostname-ok'
	assert_status 0 || runtime_calls
	assert_eq "$output" $'from-host\ntmp-ok\nscratch-ok\nscratch-size-ok\nhostname-ok' "in the pod"
	assert_eq "$(cat "$PT/vol/out")" from-pod "written through the bind mount"
}

@test "podman run -d, exec: output, exit status, env, workdir, user; rm" {
	run pm_run -d --name "$C" "$IMAGE" sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done'
	assert_status 0
	assert_eq "$(pm_status "$C")" "running 0" "status after run -d"
	run --separate-stderr pm exec "$C" sh -c 'echo exec-out; echo exec-err >&2'
	assert_status 0
	assert_eq "$output" exec-out "exec stdout"
	assert_eq "$stderr" exec-err "exec stderr"
	run pm exec "$C" sh -c 'exit 4'
	assert_status 4
	run pm exec -e QP_VAR=from-exec -w /tmp -u 1000:1000 "$C" sh -c 'echo "$QP_VAR $(pwd) $(id -u):$(id -g)"'
	assert_status 0
	assert_eq "$output" "from-exec /tmp 1000:1000" "exec -e -w -u"
	run pm rm --force --time 0 "$C"
	assert_status 0
	assert_eq "$(pm ps -aq)" "" "containers after rm"
}

@test "podman exec: 127 for a missing command, 126 for a non-executable" {
	pm_run -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
	run pm exec "$C" /no/such/command
	assert_status 127
	run pm exec "$C" /etc/passwd
	assert_status 126
}

@test "podman kill: a named signal reaches the workload; SIGKILL by default" {
	pm_run -d --name "$C" "$IMAGE" sh -c 'trap "echo got-usr1 >/tmp/sig" USR1; while :; do sleep 0.1; done' >/dev/null
	run pm kill --signal USR1 "$C"
	assert_status 0
	wait_for 40 pm exec "$C" test -s /tmp/sig
	assert_eq "$(pm exec "$C" cat /tmp/sig)" got-usr1 "what the trap wrote"
	assert_eq "$(pm_status "$C")" "running 0" "status after kill -s USR1"
	run pm kill "$C"
	assert_status 0
	wait_for 40 eval '[ "$(pm_status "$C")" = "exited 137" ]'
}

@test "podman run --memory, --pids-limit: the limits on the container's cgroup" {
	pm_run -d --name "$C" --memory 64m --pids-limit 50 "$IMAGE" sleep 1000 >/dev/null
	local id dir
	id=$(pm inspect "$C" --format '{{.Id}}')
	if [ -d "$CGROUP_FS/memory" ]; then # v1 controllers
		dir=$CGROUP_FS/memory/$CGPARENT/libpod-$id
		[ -d "$dir" ] || flunk "no memory cgroup at $dir" "$(find "$CGROUP_FS/memory/$CGPARENT")"
		assert_eq "$(cat "$dir/memory.limit_in_bytes")" 67108864 "memory.limit_in_bytes"
		assert_eq "$(cat "$CGROUP_FS/pids/$CGPARENT/libpod-$id/pids.max")" 50 "pids.max"
		grep -qx "$(pm_pid "$C")" "$dir/cgroup.procs" || flunk "the pod's pid is not in $dir"
	else
		dir=$CGROUP_FS/$CGPARENT/libpod-$id
		assert_eq "$(cat "$dir/memory.max")" 67108864 "memory.max"
		assert_eq "$(cat "$dir/pids.max")" 50 "pids.max"
	fi
}

@test "podman run --memory: the pod reads its own limit in /sys/fs/cgroup, with and without a cgroup namespace" {
	local file=/sys/fs/cgroup/memory.max ns
	[ -d "$CGROUP_FS/memory" ] && file=/sys/fs/cgroup/memory/memory.limit_in_bytes
	for ns in host private; do
		run --separate-stderr pm_run --rm --cgroupns "$ns" --memory 64m "$IMAGE" cat "$file"
		assert_status 0 || runtime_calls
		assert_eq "$output" 67108864 "$file with --cgroupns $ns"
	done
}

@test "podman exec -it: a terminal for the exec'd process" {
	pm_run -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
	run "$PTYRUN" --size 30x100 -- "${PM[@]}" exec -it "$C" sh -c 'tty; stty size; exit 6' 3>&-
	assert_status 6 || runtime_calls
	output=${output//$'\r'/}
	assert_match "$output" $'(^|\n)/dev/pts/[0-9]+\n30 100' "tty and size in exec -it"
}

@test "podman run -it: an interactive shell on a terminal" {
	run "$PTYRUN" --size 30x100 --send-after '# ' 'tty; stty size; echo typed-$((6*7)); exit 7\r' \
		-- "${PM[@]}" run -it --rm --network none --cgroup-parent "/$CGPARENT" "$IMAGE" sh 3>&-
	assert_status 7 || runtime_calls
	output=${output//$'\r'/}
	assert_match "$output" $'\n/dev/pts/[0-9]+\n30 100\ntyped-42' "the shell's answers"
	assert_eq "$(pm ps -aq)" "" "containers after run -it --rm"
}

@test "podman stop: a workload that exits on SIGTERM stops at once" {
	pm_run -d --name "$C" "$IMAGE" sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done' >/dev/null
	local pid t0 t1
	pid=$(pm_pid "$C")
	t0=$(date +%s%N)
	run pm stop "$C" # default timeout: 10 s
	t1=$(date +%s%N)
	assert_status 0
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] || flunk "stop took $(((t1 - t0) / 1000000)) ms (the workload exits on TERM)"
	assert_eq "$(pm_status "$C")" "exited 42" "status after stop"
	[ ! -e "/proc/$pid" ] || flunk "pod process $pid still there after stop"
	run pm rm "$C"
	assert_status 0
	assert_eq "$(pm ps -aq)" "" "containers after rm"
}

@test "podman stop -t 1: a workload that ignores SIGTERM is killed" {
	pm_run -d --name "$C" "$IMAGE" sh -c 'trap "" TERM; while :; do sleep 0.1; done' >/dev/null
	local t0 t1 ms
	t0=$(date +%s%N)
	run pm stop --time 1 "$C"
	t1=$(date +%s%N)
	assert_status 0
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -ge 1000 ] && [ "$ms" -lt 5000 ] || flunk "stop -t 1 took $ms ms (expected SIGKILL after 1 s)"
	assert_eq "$(pm_status "$C")" "exited 137" "status after stop"
	# a stopped container starts again, and answers exec
	run pm start "$C"
	assert_status 0
	assert_eq "$(pm_status "$C")" "running 0" "status after start"
	run pm exec "$C" echo again
	assert_status 0
	assert_eq "$output" again "exec after restart"
}

@test "podman pause, unpause: the pod freezes and thaws" {
	# the counter is renamed into place: a read never sees it half-written
	pm_run -d --name "$C" "$IMAGE" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/n.t; mv /tmp/n.t /tmp/n; sleep 0.05; done' >/dev/null
	local pid a b
	pid=$(pm_pid "$C")
	run pm pause "$C"
	assert_status 0 || runtime_calls
	assert_eq "$(pm_status "$C")" "paused 0" "status after pause"
	a=$(cat "/proc/$pid/root/tmp/n")
	sleep 0.5
	b=$(cat "/proc/$pid/root/tmp/n")
	assert_eq "$b" "$a" "counter while paused"
	run pm unpause "$C"
	assert_status 0
	assert_eq "$(pm_status "$C")" "running 0" "status after unpause"
	sleep 0.5
	b=$(cat "/proc/$pid/root/tmp/n")
	[ "$b" -gt "$a" ] || flunk "counter did not move after unpause ($a, then $b)"
}

@test "podman top, ps in the pod: PID 1 is the workload, no host paths" {
	pm_run -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
	run --separate-stderr pm exec "$C" sh -c 'tr "\0" " " </proc/1/cmdline'
	assert_status 0
	assert_eq "$output" "sleep 1000 " "PID 1's cmdline in the pod"
	run --separate-stderr pm exec "$C" ps -o pid,args
	assert_status 0
	assert_not_contains "$output" "$TEST_DIR" "ps in the pod"
	assert_not_contains "$output" "$QPOD" "ps in the pod"
	run --separate-stderr pm top "$C" pid args
	assert_status 0
	assert_not_contains "$output" "$TEST_DIR" "podman top"
	assert_match "$output" $'\n1 +sleep 1000' "podman top: PID 1"
	# the pid podman got from the runtime's pid file is the workload (runc)
	local pid
	pid=$(pm_pid "$C")
	assert_eq "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "sleep 1000 " "cmdline of the pid-file process"
}

# ---- a microVM pod -----------------------------------------------------------

vm_test() {
	[ "$RT_NAME" = qpod ] || skip "qpod.mode is qpod's annotation ($PODMAN_RUNTIME ignores it)"
	need_vm
}

@test "vm pod: podman run --rm --annotation qpod.mode=vm: output and exit status" {
	vm_test
	run --separate-stderr pm_run --rm --annotation qpod.mode=vm "$IMAGE" \
		sh -c 'echo in-vm; uname -r; exit 3'
	assert_status 3 || runtime_calls
	assert_eq "${lines[0]}" in-vm "first line"
	[ "${lines[1]}" != "$(uname -r)" ] || flunk "the pod runs the host kernel $(uname -r): not a VM"
	assert_eq "$(pm ps -aq)" "" "containers after run --rm"
}

@test "vm pod: podman run -d, stop, rm" {
	vm_test
	run pm_run -d --name "$C" --annotation qpod.mode=vm "$IMAGE" sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done'
	assert_status 0 || runtime_calls
	assert_eq "$(pm_status "$C")" "running 0" "status after run -d"
	local pid t0 t1
	pid=$(pm_pid "$C")
	t0=$(date +%s%N)
	run pm stop "$C"
	t1=$(date +%s%N)
	assert_status 0
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] || flunk "stop took $(((t1 - t0) / 1000000)) ms (the workload exits on TERM)"
	assert_eq "$(pm_status "$C")" "exited 0" "status after stop"
	run pm rm "$C"
	assert_status 0
	[ ! -e "/proc/$pid" ] || flunk "pod process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) still there after rm"
	! pgrep -f "qemu-system.*$TEST_DIR" || flunk "QEMU left"
}

@test "vm pod: podman exec: output and exit status" {
	vm_test
	run pm_run -d --name "$C" --annotation qpod.mode=vm "$IMAGE" sleep 1000
	assert_status 0 || runtime_calls
	# podman's VM pods, with their bind mounts (/etc/hosts ...), are template clones
	assert_eq "$(qp state "$(pm inspect --format '{{.Id}}' "$C")" | jq '.timeline.restore > 0')" true "a clone (boot auto)"
	run --separate-stderr pm exec "$C" sh -c 'echo exec-in-vm; exit 5'
	assert_status 5 || runtime_calls
	assert_eq "$output" exec-in-vm "exec stdout"
}

@test "vm pod: podman run -it: a prompt, ^C stops a foreground sleep and the shell survives, exit 4" {
	vm_test
	run "$PTYRUN" --timeout 120 --size 30x100 --send-after '# ' 'tty; stty size\r' \
		--send-after '30 100' 'sh -c "echo sl""eeping; exec sleep 600"\r' \
		--send-after 'sleeping' '\x03' \
		--send-after '# ' 'echo survived-$((40+2)); exit 4\r' \
		-- "${PM[@]}" run -it --rm --network none --cgroup-parent "/$CGPARENT" --annotation qpod.mode=vm "$IMAGE" sh 3>&-
	assert_status 4 || runtime_calls
	output=${output//$'\r'/}
	assert_match "$output" $'\n/dev/pts/[0-9]+\n30 100\n' "the guest's terminal and its size"
	assert_contains "$output" survived-42 "the shell survived ^C"
	assert_eq "$(pm ps -aq)" "" "containers after run -it --rm"
}

@test "vm pod: podman exec -it: a terminal in the VM for the exec'd process" {
	vm_test
	pm_run -d --name "$C" --annotation qpod.mode=vm "$IMAGE" sleep 1000 >/dev/null
	run "$PTYRUN" --timeout 120 --size 30x100 -- "${PM[@]}" exec -it "$C" sh -c 'tty; stty size; exit 6' 3>&-
	assert_status 6 || runtime_calls
	output=${output//$'\r'/}
	assert_match "$output" $'(^|\n)/dev/pts/[0-9]+\n30 100' "tty and size in exec -it"
}

# pmn ARGS...: pm in the test's network namespace $PMNS, where the CNI
# bridge plugin makes its bridge
pmn() {
	nsenter --net="/run/netns/$PMNS" "${PM[@]}" "$@" 3>&-
}

@test "vm pod: a CNI network of podman's (bridge plugin, podman in a namespace of the test's): the guest has the address, answers a client, reaches the gateway; no veth or lease after rm" {
	vm_test
	local ip
	PMNS=qppm-$PREFIX
	ip netns add "$PMNS"
	ip -n "$PMNS" link set lo up
	# a network of the test's own: its leases under $PT, not /var/lib/cni
	cat >"$PT/netconf/qpodtest.conflist" <<-EOF
		{"cniVersion": "0.4.0", "name": "qpodtest",
		 "plugins": [{"type": "bridge", "bridge": "qppm0", "isGateway": true, "ipMasq": false,
		   "ipam": {"type": "host-local", "subnet": "10.89.7.0/24", "routes": [{"dst": "0.0.0.0/0"}],
		            "dataDir": "$PT/cni-ipam"}}]}
	EOF
	run pmn run -d --name "$C" --network qpodtest --cgroup-parent "/$CGPARENT" --annotation qpod.mode=vm "$IMAGE" \
		sh -c 'mkdir -p /tmp/www && echo served-by-the-guest >/tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www'
	assert_status 0 || runtime_calls
	ip=$(pmn inspect --format '{{(index .NetworkSettings.Networks "qpodtest").IPAddress}}' "$C")
	assert_match "$ip" '^10\.89\.7\.[0-9]+$' "the container's address"
	run --separate-stderr pmn exec "$C" ip -4 -o addr show eth0
	assert_status 0
	assert_contains "$output" "inet $ip/24" "the guest's eth0"
	wait_for 400 nsenter --net="/run/netns/$PMNS" curl -sf -m 5 -o "$TEST_DIR/got" "http://$ip:8080/"
	assert_eq "$(cat "$TEST_DIR/got")" served-by-the-guest "the guest's answer"
	run --separate-stderr pmn exec "$C" ping -c 1 -W 5 10.89.7.1
	assert_status 0
	run pmn rm --force --time 0 "$C"
	assert_status 0
	assert_eq "$(ip -n "$PMNS" -o link show master qppm0 2>/dev/null)" "" "veths left on the bridge"
	assert_eq "$(ls "$PT/cni-ipam/qpodtest" 2>/dev/null | grep '^10\.' || true)" "" "leases left"
}

# the QEMUs of the runtime's state root
pm_vm_qemus() { qemus_of_root "$RT_ROOT"; }

@test "vm pod: podman pod create + run --pod --annotation qpod.mode=vm: one VM for the pod's containers, over its loopback; pod rm leaves nothing" {
	vm_test
	local p=$PREFIX-p
	# the infra container from the test image (no registry here): a
	# container pod; podman's pods name it in CRI-O's SandboxID key
	run pm pod create --name "$p" --infra-image "$IMAGE" --infra-command /bin/init --cgroup-parent "/$CGPARENT"
	assert_status 0 || runtime_calls
	local podid=$output
	run pm run -d --pod "$p" --name "$C-web" --annotation qpod.mode=vm "$IMAGE" \
		sh -c 'mkdir -p /tmp/w && echo "from the pod VM $(uname -r)" >/tmp/w/index.html && exec httpd -f -p 127.0.0.1:8080 -h /tmp/w'
	assert_status 0 || runtime_calls
	run --separate-stderr pm run --rm --pod "$p" --annotation qpod.mode=vm "$IMAGE" \
		sh -c 'sleep 1; wget -qO- http://127.0.0.1:8080/; exit 5'
	assert_status 5 || runtime_calls
	assert_contains "$output" "from the pod VM" "the second container reached the first on the pod's loopback"
	[[ $output != *"$(uname -r)"* ]] || flunk "the containers run the host's kernel: $output"
	assert_eq "$(pm_vm_qemus | wc -w)" 1 "QEMUs of the pod"
	run pm pod rm --force --time 0 "$p"
	assert_status 0 || runtime_calls
	# the pod's own cgroup is podman's: on a v1 host it leaves it in the
	# hierarchies it does not manage (name=systemd, the unified tree),
	# where the infra's cgroup path made it, as it would under runc
	rmdir /sys/fs/cgroup/*/"$CGPARENT/$podid" 2>/dev/null || true
	assert_eq "$(pm_vm_qemus)" "" "QEMUs after pod rm"
	assert_eq "$(rt_state)" "" "the runtime's state after pod rm"
}
