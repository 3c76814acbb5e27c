# tests/cli/containerd_helpers.bash — a private containerd for the tests that
# drive qpod through containerd (containerd.bats: ctr and the runc v2 shim;
# cri.bats: the CRI plugin). Loaded after helpers.bash.
#
# Everything of one test file lives under one `mktemp -d` directory $CD_DIR:
# containerd's config, root (content store, snapshots, metadata), state,
# unix sockets, log, qpod's state roots, the image tarballs and (cri.bats)
# the CNI conf and bin dirs. Nothing is pulled: the images are OCI image
# tarballs assembled here from the busybox test rootfs and imported with
# `ctr images import`. Image names are under localhost/, so even a pull
# attempt (none is expected) could not send a packet off the machine.
#
# ctr's IO fifos go to $CD_DIR/fifo (--fifo-dir; the default is
# /run/containerd/fifo). What the file's containerd makes outside $CD_DIR,
# and how it is cleaned up:
#   - the shims' sockets /run/containerd/s/<sha256(address/namespace/id)>
#     (a path containerd 1.6 hard-codes): removed by the shims; cd_cleanup
#     removes those of recorded shims that were killed;
#   - qpod's cgroups /sys/fs/cgroup/<controller>/<namespace>/<id> (ctr's
#     cgroupsPath; the CRI sets its own): qpod removes the leaf, cd_cleanup the
#     file's (empty) <namespace> parent, which runc leaves behind too;
#   - nothing else: the CRI's pod network namespaces are mounted under
#     $CD_DIR/state (netns_mounts_under_state_dir), not in /run/netns;
#     cd_cleanup unmounts whatever is left under $CD_DIR.
#
# cd_start also starts a watchdog: if the bats process dies without running
# teardown_file (killed by a timeout), the watchdog runs the same cleanup, so
# no containerd, shim, QEMU, mount or cgroup of the file outlives it.

# shellcheck disable=SC2034 # used by the test files
CD_PY=/usr/bin/python3 # Debian's python3, where python3-grpcio is installed
CRI_PY=$REPO/tools/cri/cri.py
IMAGE=localhost/qpod-test/busybox:test
PAUSE_IMAGE=localhost/qpod-test/pause:test
SHIM_SOCKET_DIR=/run/containerd/s

need_containerd() {
	local b
	for b in containerd ctr containerd-shim-runc-v2; do
		command -v "$b" >/dev/null || skip "$b is not installed (apt-get install containerd)"
	done
}

# mk_oci_image ROOTFS OUT.tar NAME [CMD-JSON]: an OCI image layout tarball
# (oci-layout, index.json, blobs/sha256/...) with one uncompressed layer,
# the tar of ROOTFS, and NAME as io.containerd.image.name, so that `ctr
# images import` names the image NAME.
mk_oci_image() {
	local rootfs=$1 out=$2 name=$3 cmd=${4:-'["/bin/sh"]'}
	local w ld ls cd cs md ms
	w=$(mktemp -d "${CD_DIR:-/tmp}/img.XXXXXX") || return 1
	mkdir -p "$w/blobs/sha256"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$w/layer.tar" . || return 1
	ld=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	ls=$(stat -c %s "$w/layer.tar")
	mv "$w/layer.tar" "$w/blobs/sha256/$ld"
	jq -cn --arg d "sha256:$ld" --argjson cmd "$cmd" '{
		architecture: "amd64", os: "linux",
		config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: $cmd, WorkingDir: "/"},
		rootfs: {type: "layers", diff_ids: [$d]}}' >"$w/config.json" || return 1
	cd=$(sha256sum "$w/config.json" | cut -d' ' -f1)
	cs=$(stat -c %s "$w/config.json")
	mv "$w/config.json" "$w/blobs/sha256/$cd"
	jq -cn --arg c "sha256:$cd" --argjson cs "$cs" --arg l "sha256:$ld" --argjson ls "$ls" '{
		schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' \
		>"$w/manifest.json" || return 1
	md=$(sha256sum "$w/manifest.json" | cut -d' ' -f1)
	ms=$(stat -c %s "$w/manifest.json")
	mv "$w/manifest.json" "$w/blobs/sha256/$md"
	jq -cn --arg m "sha256:$md" --argjson ms "$ms" --arg n "$name" '{
		schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
		manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
			platform: {architecture: "amd64", os: "linux"},
			annotations: {"io.containerd.image.name": $n,
				"org.opencontainers.image.ref.name": ($n | sub(".*:"; ""))}}]}' >"$w/index.json" || return 1
	echo '{"imageLayoutVersion": "1.0.0"}' >"$w/oci-layout"
	tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$w" -cf "$out" oci-layout index.json blobs || return 1
	rm -rf "$w"
}

# cd_setup_dir: $CD_DIR and the names inside it (setup_file).
cd_setup_dir() {
	CD_DIR=$(mktemp -d /tmp/qpod-cd.XXXXXX)
	CD_SOCK=$CD_DIR/containerd.sock
	CD_CONFIG=$CD_DIR/config.toml
	CD_LOG=$CD_DIR/containerd.log
	# ctr's namespace (and so qpod's cgroup parent): unique to this file
	CD_NS=qt$(printf '%04x%04x' "$RANDOM" "$$")
	mkdir -p "$CD_DIR/qpod"
	: >"$CD_DIR/shims.list"  # "NAMESPACE ID" of every shim a test made
	: >"$CD_DIR/netns.list"  # pod network namespaces (cri.bats)
	[ -d /run/containerd ] && touch "$CD_DIR/had-run-containerd"
	export CD_DIR CD_SOCK CD_CONFIG CD_LOG CD_NS
}

# cd_config_head [TOP-LEVEL-LINES]: the common top of a config (TOML,
# version 2): paths, sockets, no debug or metrics listener, the "opt"
# plugin's directory inside $CD_DIR (its default is /opt/containerd). Keys
# of the top level (disabled_plugins) must come before the first table.
cd_config_head() {
	cat <<EOF
version = 2
root = "$CD_DIR/root"
state = "$CD_DIR/state"
oom_score = 0
${1:-}

[grpc]
  address = "$CD_SOCK"

[ttrpc]
  address = "$CD_SOCK.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$CD_DIR/opt"
EOF
}

# cd_start: containerd --config $CD_CONFIG in the background (pid in
# $CD_PID and $CD_DIR/containerd.pid), ready when `ctr version` answers; the
# watchdog next to it. Exports QPOD_KERNEL first (vm_env), which containerd
# passes on to the shims and so to qpod; the accel is left to qpod's auto
# (the KVM probe), as a user's containerd would have it, unless
# QPOD_TEST_ACCEL says otherwise. With $CD_NETNS (a name under /run/netns,
# made by the caller) containerd, its CNI plugins and shims, and so qpod,
# run in that network namespace; cd_cleanup deletes it.
cd_start() {
	local i
	QPOD_TEST_ACCEL=${QPOD_TEST_ACCEL:-auto} vm_env
	(exec ${CD_NETNS:+nsenter --net="/run/netns/$CD_NETNS"} containerd --config "$CD_CONFIG") </dev/null >"$CD_LOG" 2>&1 3>&- &
	CD_PID=$!
	echo "$CD_PID" >"$CD_DIR/containerd.pid"
	export CD_PID
	cd_watchdog "$$"
	for ((i = 0; i < 200; i++)); do
		if ! kill -0 "$CD_PID" 2>/dev/null; then
			echo "containerd exited during start:" >&2
			tail -n 20 "$CD_LOG" >&2
			return 1
		fi
		[ -S "$CD_SOCK" ] && ctr -a "$CD_SOCK" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "containerd did not answer on $CD_SOCK within 20 s:" >&2
	tail -n 20 "$CD_LOG" >&2
	return 1
}

# cd_watchdog PID: a background loop that runs cd_cleanup once PID (the bats
# file process) is gone; teardown_file stops it first (cd_stop).
cd_watchdog() {
	local watched=$1
	(
		trap '' INT TERM HUP
		while kill -0 "$watched" 2>/dev/null; do sleep 1; done
		[ -e "$CD_DIR/cleaned" ] || cd_cleanup
	) </dev/null >>"$CD_DIR/watchdog.log" 2>&1 3>&- &
	echo $! >"$CD_DIR/watchdog.pid"
}

# ctr ARGS: ctr on the private socket and namespace, bounded in time (a
# runtime that never reports an exit must not hang the suite).
c() {
	timeout -k 5 "${CTR_TIMEOUT:-30}" ctr -a "$CD_SOCK" -n "$CD_NS" "$@"
}

# the shim socket of NAMESPACE ID (containerd 1.6's shim.SocketAddress)
shim_socket() {
	printf '%s' "$CD_SOCK/$1/$2" | sha256sum | sed "s|^\([0-9a-f]*\).*|$SHIM_SOCKET_DIR/\1|"
}

record_shim() { echo "$1 $2" >>"$CD_DIR/shims.list"; }

# The pids of processes whose command line names $CD_DIR (the shims, by
# their -address; qpod and QEMU by the bundle and state paths) or, with an
# argument, contain that string.
cd_procs() {
	local pat=${1:-$CD_DIR} f pid cmd
	grep -laF -e "$pat" /proc/[0-9]*/cmdline 2>/dev/null | while IFS= read -r f; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		# gone by now, or the grep above
		cmd=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
		[ -n "$cmd" ] && [[ $cmd != grep* ]] || continue
		echo "$pid"
	done
}

# "PID (COMMAND LINE)" of a process, for messages
proc_desc() {
	echo "$1 ($(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline"))"
}

# cd_mounts [PATTERN]: mount points (host namespace) under $CD_DIR or matching
# PATTERN, deepest first
cd_mounts() {
	awk -v p="${1:-$CD_DIR}" 'index($5, p) { print length($5), $5 }' /proc/self/mountinfo | sort -rn | cut -d' ' -f2-
}

# alive PID: PID exists and is not a zombie
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# cd_stop: SIGTERM to our containerd (by pid), SIGKILL after 10 s.
cd_stop() {
	local pid i
	[ -s "$CD_DIR/containerd.pid" ] || return 0
	pid=$(cat "$CD_DIR/containerd.pid")
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
	done
	echo "containerd $pid did not exit on SIGTERM: SIGKILL" >&2
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# cd_cleanup: stop everything the file's containerd started and remove
# $CD_DIR. Prints one line per thing it had to clean up by force; returns 1
# if there was any (the last test of each file asserts there was none).
cd_cleanup() {
	local found=0 pid r id ns i m
	touch "$CD_DIR/cleaned"
	cd_stop
	# pods in qpod's state roots: delete --force (kills workloads and VMs)
	for r in "$CD_DIR"/qpod/*/* "$CD_DIR"/qpod/*; do
		[ -d "$r" ] || continue
		for id in $(cd "$r" 2>/dev/null && ls); do
			"$QPOD" --root "$r" state "$id" >/dev/null 2>&1 || continue
			echo "cleanup: pod $id left in $r"
			found=1
			"$QPOD" --root "$r" delete --force "$id" >/dev/null 2>&1
		done
	done
	# shims, qpod processes, QEMUs naming $CD_DIR
	for i in 1 2; do
		for pid in $(cd_procs); do
			echo "cleanup: process left: $(proc_desc "$pid")"
			found=1
			kill -"$([ $i = 1 ] && echo TERM || echo KILL)" "$pid" 2>/dev/null
		done
		[ -z "$(cd_procs)" ] && break
		sleep 1
	done
	# shim sockets of killed shims
	while read -r ns id; do
		[ -n "$id" ] || continue
		m=$(shim_socket "$ns" "$id")
		if [ -e "$m" ]; then
			echo "cleanup: shim socket left: $m ($ns/$id)"
			found=1
			rm -f "$m"
		fi
	done <"$CD_DIR/shims.list"
	# pod network namespaces (cri.bats)
	while read -r m; do
		[ -n "$m" ] || continue
		if [ -e "$m" ]; then
			echo "cleanup: network namespace left: $m"
			found=1
			umount "$m" 2>/dev/null
			rm -f "$m"
		fi
	done <"$CD_DIR/netns.list"
	# the namespace containerd ran in (cd_start), and its bridge with it
	[ -n "${CD_NETNS:-}" ] && ip netns del "$CD_NETNS" 2>/dev/null
	# mounts: overlay rootfs, sandbox shm, ...
	for m in $(cd_mounts); do
		echo "cleanup: mount left: $m"
		found=1
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	# the cgroup parent named after ctr's namespace (runc leaves it too)
	for m in /sys/fs/cgroup/*/"$CD_NS" /sys/fs/cgroup/"$CD_NS"; do
		[ -d "$m" ] || continue
		for r in "$m"/*/; do
			[ -d "$r" ] || continue
			echo "cleanup: cgroup left: $r"
			found=1
			rmdir "$r" 2>/dev/null
		done
		rmdir "$m" 2>/dev/null
	done
	# /run/containerd/s and /run/containerd, if this file made them and
	# nothing else uses them
	if [ ! -e "$CD_DIR/had-run-containerd" ]; then
		rmdir "$SHIM_SOCKET_DIR" /run/containerd/fifo /run/containerd 2>/dev/null
		if [ -e /run/containerd ]; then
			echo "cleanup: /run/containerd left: $(ls /run/containerd/* 2>/dev/null | head -n 5 | tr '\n' ' ')"
			found=1
		fi
	fi
	if [ -z "$(cd_mounts)" ]; then
		rm -rf "$CD_DIR"
	else
		echo "cleanup: mounts still under $CD_DIR, not removed"
		found=1
	fi
	[ "$found" = 0 ]
}

# teardown_file: stop the watchdog, then clean up (quietly: the last test
# of the file has asserted the clean state already).
cd_teardown_file() {
	[ -n "${CD_DIR:-}" ] && [ -d "$CD_DIR" ] || return 0
	if [ -s "$CD_DIR/watchdog.pid" ]; then
		kill -TERM "$(cat "$CD_DIR/watchdog.pid")" 2>/dev/null
	fi
	[ -e "$CD_DIR/cleaned" ] || cd_cleanup >&2
	return 0
}

# Leftovers of one test beyond what helpers.bash's teardown checks: shims,
# their sockets, mounts and cgroups of the test's containers (IDs start with
# $PREFIX). One line each, on stdout.
cd_test_leftovers() {
	local ns id m pid
	[ -d "$CD_DIR" ] || return 0
	while read -r ns id; do
		[[ $id == "$PREFIX"* ]] || continue
		m=$(shim_socket "$ns" "$id")
		[ -e "$m" ] && echo "shim socket left: $m ($ns/$id)"
	done <"$CD_DIR/shims.list"
	for pid in $(cd_procs "$PREFIX"); do
		echo "process left: $(proc_desc "$pid")"
	done
	for m in $(cd_mounts "/$PREFIX"); do
		echo "mount left: $m"
	done
	for m in /sys/fs/cgroup/*/"$CD_NS"/"$PREFIX"* /sys/fs/cgroup/"$CD_NS"/"$PREFIX"*; do
		[ -e "$m" ] && echo "cgroup left: $m"
	done
	return 0
}

# the pids of the shims of ID
shim_pids() {
	local pid
	for pid in $(cd_procs "$1"); do
		[[ $(proc_desc "$pid") == *containerd-shim* ]] && echo "$pid"
	done
	return 0
}

# ctr_remove NAMESPACE ID: delete container ID and its task through ctr
# (SIGKILL, up to 5 s for the exit, task delete, else task delete --force,
# containers rm). If the task will not go
# (a runtime that never reports the exit), kill its shim by pid and unmount
# its rootfs, then let containerd clean up after the dead shim. Says on
# stderr what it had to do by force; returns 1 then.
ctr_remove() {
	local ns=$1 id=$2 pid m rc=0 i
	local cc=(timeout -k 5 10 ctr -a "$CD_SOCK" -n "$ns")
	"${cc[@]}" task kill -s KILL "$id" >/dev/null 2>&1
	for i in $(seq 1 50); do
		"${cc[@]}" task ls 2>/dev/null | awk -v id="$id" '$1 == id && $3 != "STOPPED" { f = 1 } END { exit !f }' || break
		sleep 0.1
	done
	"${cc[@]}" task delete "$id" >/dev/null 2>&1 || "${cc[@]}" task delete --force "$id" >/dev/null 2>&1
	if "${cc[@]}" task ls -q 2>/dev/null | grep -qx -e "$id"; then
		echo "teardown: ctr task delete --force $id failed: killing its shim" >&2
		rc=1
		for pid in $(shim_pids "$id"); do
			kill -KILL "$pid" 2>/dev/null
		done
		for i in $(seq 1 50); do
			[ -z "$(shim_pids "$id")" ] && break
			sleep 0.1
		done
		for m in $(cd_mounts "/$id/"); do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
		rm -f "$(shim_socket "$ns" "$id")"
		"${cc[@]}" task delete --force "$id" >/dev/null 2>&1
	fi
	if ! "${cc[@]}" containers rm "$id" >/dev/null 2>&1 &&
		"${cc[@]}" containers ls -q 2>/dev/null | grep -qx -e "$id"; then
		echo "teardown: ctr containers rm $id failed" >&2
		rc=1
	fi
	return $rc
}
