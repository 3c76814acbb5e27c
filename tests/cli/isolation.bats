#!/usr/bin/env bats
# tests/cli/isolation.bats — what a container pod sees from inside: its own
# pid/uts/ipc/net/mount/cgroup namespaces, hostname, masked and read-only
# paths, /dev, rlimits, no_new_privs, capabilities and user.

load helpers

# the rootless test's world-traversable directory, removed whatever happened
teardown() {
	[ -z "${ROOTLESS_DIR:-}" ] || rm -rf "$ROOTLESS_DIR"
	teardown_common
}

# prun ARGS... : a friendly foreground pod, captured by `run`
prun() {
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- "$@"
}

@test "pid namespace: pid 1 is the workload (runc's model), /proc shows only the pod" {
	prun sh -c 'cat /proc/1/comm; echo $$; ls /proc | grep -cE "^[0-9]+$"'
	assert_status 0
	local init=${lines[0]} mypid=${lines[1]} count=${lines[2]}
	assert_eq "$init" sh "comm of pid 1"
	assert_eq "$mypid" 1 "the shell's pid inside"
	# sh, ls, grep (and maybe a subshell)
	[ "$count" -ge 1 ] && [ "$count" -le 5 ] || flunk "/proc lists $count pids:" "$output"
	prun sh -c "[ ! -e /proc/$$ ] || [ \$\$ = $$ ]"
	assert_status 0

	# --init: the tiny init is PID 1 and the workload its child
	run --separate-stderr qp run --rm --init "$ROOTFS" -- sh -c 'cat /proc/1/comm; echo $$'
	assert_status 0
	assert_eq "${lines[0]}" qpod-init "comm of pid 1 with --init"
	[ "${lines[1]}" -ne 1 ] && [ "${lines[1]}" -lt 10 ] || flunk "shell pid with --init is ${lines[1]}"
}

@test "hostname from the spec and from --hostname" {
	make_bundle "$BUNDLE" "$(helper_args hostname) | .hostname = \"spec-host\""
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" spec-host "hostname from spec"
	prun "$HELPER" hostname
	assert_status 0
	[ "$output" != "$(hostname)" ] || flunk "the pod has the host's hostname $(hostname)"
	run --separate-stderr qp run --rm --hostname pod-h "$ROOTFS" -- "$HELPER" hostname
	assert_status 0
	assert_eq "$output" pod-h "hostname from --hostname"
	[ "$(hostname)" != pod-h ] || flunk "the host's hostname changed"
}

# the default spec's masked paths that this host has: MASKED_FILES (e.g.
# /proc/kcore, /proc/keys, /proc/timer_list, as the kernel's config has them)
# and MASKED_DIRS (/sys/firmware...); fails when either is empty
masked_on_host() {
	local p
	MASKED_FILES=() MASKED_DIRS=()
	for p in $("$QPOD" spec | jq -r '.linux.maskedPaths[]'); do
		if [ -d "$p" ]; then MASKED_DIRS+=("$p"); elif [ -e "$p" ]; then MASKED_FILES+=("$p"); fi
	done
	[ "${#MASKED_FILES[@]}" -gt 0 ] || flunk "this host has none of the masked files"
	[ "${#MASKED_DIRS[@]}" -gt 0 ] || flunk "this host has none of the masked directories"
}

@test "masked paths: each file (/proc/kcore, /proc/keys...) is /dev/null, each directory an empty read-only tmpfs" {
	# what the pod sees of each is the mask itself, not a read that merely
	# fails (the pod lacks CAP_SYS_RAWIO: /proc/kcore would not read unmasked)
	local p files dirs
	masked_on_host
	files=("${MASKED_FILES[@]}") dirs=("${MASKED_DIRS[@]}")
	prun sh -c 'for p; do echo "$p $('"$HELPER"' stat "$p") $(ls -A "$p" | wc -l)"; done
		awk "{ print \"mount\", \$5, \$6, \$(NF-2) }" /proc/self/mountinfo' sh "${files[@]}" "${dirs[@]}"
	assert_status 0
	for p in "${files[@]}"; do
		grep -qx "$p chr [0-7]* 1:3 1" <<<"$output" || flunk "$p is not /dev/null (c 1:3):" "$output"
	done
	for p in "${dirs[@]}"; do
		grep -qx "$p dir [0-7]* 0" <<<"$output" || flunk "$p is not an empty directory:" "$output"
		grep -qE "^mount $p ro(,[^ ]*)? tmpfs$" <<<"$output" || flunk "$p is not a read-only tmpfs:" "$output"
	done
}

@test "/proc/sys and /sys are read-only" {
	# root in the pod (CAP_DAC_OVERRIDE) passes the files' own permission
	# checks: only the read-only mount refuses, EROFS (EACCES or EPERM
	# would be a capability or the kernel's, not the mount's); sysfs
	# creates no files anyway, so an existing one is opened (lo's mtu:
	# every network namespace has lo)
	prun sh -c "$HELPER writefile /proc/sys/kernel/hostname; $HELPER writefile /proc/sys/vm/overcommit_memory; \
		$HELPER writefile /sys/class/net/lo/mtu; \
		awk '\$5 == \"/sys\" || \$5 == \"/proc/sys\" { print \$5, \$6 }' /proc/self/mountinfo"
	assert_status 0
	assert_eq "${lines[0]}" EROFS "open /proc/sys/kernel/hostname for writing"
	assert_eq "${lines[1]}" EROFS "open /proc/sys/vm/overcommit_memory for writing"
	assert_eq "${lines[2]}" EROFS "open /sys/class/net/lo/mtu for writing"
	grep -qE '^/sys ro(,|$)' <<<"$output" || flunk "/sys is not mounted ro:" "$output"
	grep -qE '^/proc/sys ro(,|$)' <<<"$output" || flunk "/proc/sys is not mounted ro:" "$output"
}

@test "/dev: standard nodes, pts, shm and mqueue; no host devices" {
	prun sh -c "for d in null zero full random urandom tty; do echo \"\$d \$($HELPER stat /dev/\$d)\"; done;
		$HELPER stat /dev/pts; $HELPER stat /dev/shm;
		awk '{ print \"mount\", \$5, \$(NF-2) }' /proc/self/mountinfo; ls /dev"
	assert_status 0
	assert_contains "$output" "null chr 666 1:3" "/dev/null"
	assert_contains "$output" "zero chr 666 1:5" "/dev/zero"
	assert_contains "$output" "full chr 666 1:7" "/dev/full"
	assert_contains "$output" "random chr 666 1:8" "/dev/random"
	assert_contains "$output" "urandom chr 666 1:9" "/dev/urandom"
	assert_contains "$output" "tty chr 666 5:0" "/dev/tty"
	grep -q "^mount /dev/pts devpts$" <<<"$output" || flunk "/dev/pts is not devpts:" "$output"
	grep -q "^mount /dev/shm tmpfs$" <<<"$output" || flunk "/dev/shm is not a tmpfs:" "$output"
	grep -q "^mount /dev/mqueue mqueue$" <<<"$output" || flunk "/dev/mqueue is not mounted:" "$output"
	local dev
	for dev in mem kmem port kmsg sda vda nvme0 kvm fuse; do
		grep -qx "$dev" <<<"$output" && flunk "host device /dev/$dev is visible in the pod"
	done
	return 0
}

@test "network namespace has only lo" {
	prun sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
	assert_status 0
	assert_eq "$output" lo "interfaces"
}

@test "namespaces differ from the host's: uts ipc net pid mnt cgroup" {
	prun sh -c "for n in uts ipc net pid mnt cgroup; do echo \$n \$($HELPER readlink /proc/self/ns/\$n); done"
	assert_status 0
	local n inside host
	for n in uts ipc net pid mnt cgroup; do
		inside=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$output")
		host=$(readlink "/proc/self/ns/$n")
		assert_match "$inside" "^$n:\[[0-9]+\]$" "$n namespace inside"
		[ "$inside" != "$host" ] || flunk "$n namespace is the host's ($host)"
	done
}

@test "rlimit NOFILE from the spec" {
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "ulimit -n; ulimit -Hn"]
		| .process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 777, "hard": 888}]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" "777"$'\n'"888" "ulimit -n / -Hn"
}

@test "no_new_privs is set" {
	prun grep NoNewPrivs /proc/self/status
	assert_status 0
	assert_match "$output" '^NoNewPrivs:[[:space:]]+1$' "NoNewPrivs"
}

@test "capabilities: the default set, and a spec with only CAP_KILL" {
	prun "$HELPER" caps
	assert_status 0
	assert_match "$output" 'CapEff:[[:space:]]+00000000a80425fb' "CapEff (default set)"
	assert_match "$output" 'CapBnd:[[:space:]]+00000000a80425fb' "CapBnd (default set)"
	assert_match "$output" 'CapInh:[[:space:]]+0000000000000000' "CapInh"
	assert_match "$output" 'CapAmb:[[:space:]]+0000000000000000' "CapAmb"

	make_bundle "$BUNDLE" "$(helper_args caps) | .process.capabilities = {
		\"bounding\": [\"CAP_KILL\"], \"effective\": [\"CAP_KILL\"],
		\"permitted\": [\"CAP_KILL\"], \"inheritable\": [], \"ambient\": []}"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_match "$output" 'CapBnd:[[:space:]]+0000000000000020' "CapBnd (CAP_KILL only)"
	assert_match "$output" 'CapEff:[[:space:]]+0000000000000020' "CapEff (CAP_KILL only)"
}

@test "user from the spec and --user" {
	make_bundle "$BUNDLE" "$(helper_args ids) | .process.user = {\"uid\": 65534, \"gid\": 65534}"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_match "$output" '^uid=65534 gid=65534 ' "ids from the spec"
	prun "$HELPER" ids
	assert_match "$output" '^uid=0 gid=0 ' "default ids"
	run --separate-stderr qp run --rm --user 65534:65534 "$ROOTFS" -- "$HELPER" ids
	assert_status 0
	assert_match "$output" '^uid=65534 gid=65534 ' "ids with --user"
}

@test "the rootfs is the pod's /, the host's files are not there" {
	prun sh -c "[ ! -e $QPOD ] && [ ! -e /work ] && echo isolated"
	assert_eq "$output" isolated "host paths inside the pod"
}

@test "user namespace: uid/gid maps from the spec; root in the pod is an unprivileged host uid" {
	make_bundle "$BUNDLE" "$(helper_args sleep 30) | .linux.namespaces += [{\"type\": \"user\"}]
		| .linux.uidMappings = [{\"containerID\": 0, \"hostID\": 200000, \"size\": 65536}]
		| .linux.gidMappings = [{\"containerID\": 0, \"hostID\": 200000, \"size\": 65536}]"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	run --separate-stderr qp exec "$ID" -- sh -c 'id -u; cat /proc/self/uid_map'
	assert_status 0
	assert_eq "$(echo "$output" | head -n1)" 0 "uid inside"
	assert_match "$(echo "$output" | tail -n1)" '^ +0 +200000 +65536$' "uid_map"
	# seen from the host, the pod's processes run as uid 200000
	local pid
	pid=$(qp ps "$ID" | tail -n1)
	assert_match "$(grep '^Uid:' "/proc/$pid/status")" '^Uid:\s+200000\s' "host uid of a pod process"
	# it entered the pod cgroup by itself, from inside the user namespace
	# (through files qpod opened for it)
	assert_in_pod_cgroup "$(pod_field "$ID" pid)"
	qp delete --force "$ID"
}

@test "rootless: an unprivileged user runs a pod in a user namespace (no cgroup of its own)" {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	local nobody=(setpriv --reuid 65534 --regid 65534 --clear-groups env -u XDG_RUNTIME_DIR)
	# bats' own temp dirs are private to root: a world-traversable one,
	# holding copies of the binary and the rootfs (the clone and the cache
	# may sit where only root enters: a 0700 mktemp -d, a private home)
	local rl
	rl=$(mktemp -d /tmp/qpod-rootless.XXXXXX)
	ROOTLESS_DIR=$rl
	chmod 755 "$rl"
	install -m 755 "$QPOD" "$rl/qpod"
	cp -a "$ROOTFS" "$rl/rootfs"
	chmod 755 "$rl/rootfs"
	mkdir -m 755 "$rl/bundle"
	run --separate-stderr "${nobody[@]}" "$rl/qpod" spec --rootless
	assert_status 0
	jq --arg r "$rl/rootfs" '.root.path = $r | .process.args = ["sh", "-c", "id -u; cat /proc/self/uid_map"]' \
		<<<"$output" >"$rl/bundle/config.json"
	chmod 644 "$rl/bundle/config.json"
	mkdir -m 700 "$rl/state" && chown 65534:65534 "$rl/state"
	run --separate-stderr "${nobody[@]}" "$rl/qpod" --root "$rl/state" run "$ID" --bundle "$rl/bundle"
	local out=$output st=$status
	# a pod that asks for limits needs a cgroup it may write: a clear error
	run --separate-stderr "${nobody[@]}" "$rl/qpod" --root "$rl/state" run --rm --memory 64M "$rl/rootfs" -- true
	local st2=$status err2=$stderr left
	left=$(ls "$rl/state")
	[ "$st" -eq 0 ] || flunk "rootless run: exit $st" "$out"
	assert_eq "$(head -n1 <<<"$out")" 0 "root inside"
	assert_match "$(tail -n1 <<<"$out")" '^ +0 +65534 +1$' "uid_map: root is the caller"
	assert_eq "$st2" 125 "exit status of a rootless run with --memory"
	assert_match "$err2" '^qpod: ' "its error"
	assert_eq "$left" "" "state after the refused run"
}

@test "bind mounts with propagation, rro and tmpcopyup options (what podman sends)" {
	local src=$TEST_DIR/src
	mkdir -p "$src/sub"
	echo from-host >"$src/hosts"
	echo inner >"$src/sub/file"
	local o
	for o in private rprivate shared rshared slave rslave unbindable runbindable; do
		make_bundle "$BUNDLE" ".process.args = [\"sh\", \"-c\", \"cat /etc/hosts; grep ' /etc/hosts ' /proc/self/mountinfo\"]
			| .mounts += [{\"destination\": \"/etc/hosts\", \"type\": \"bind\", \"source\": \"$src/hosts\",
				\"options\": [\"bind\", \"$o\", \"ro\"]}]"
		run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
		assert_status 0
		assert_eq "${lines[0]}" from-host "bind mount with $o"
		# ro applied to the bind mount itself
		assert_match "${lines[1]}" ' /etc/hosts ro,' "mountinfo of /etc/hosts with $o"
		case $o in
		*shared) assert_match "${lines[1]}" 'shared:' "propagation $o" ;;
		*private) assert_not_contains "${lines[1]}" 'shared:' "propagation $o" ;;
		*unbindable) assert_match "${lines[1]}" 'unbindable' "propagation $o" ;;
		esac
	done

	# rro: read-only down to the mounts below
	make_bundle "$BUNDLE" ".process.args = [\"sh\", \"-c\", \"touch /mnt/x 2>/dev/null && echo rw || echo ro\"]
		| .mounts += [{\"destination\": \"/mnt\", \"type\": \"bind\", \"source\": \"$src\", \"options\": [\"rbind\", \"rro\"]}]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" ro "rro bind mount"
	[ ! -e "$src/x" ] || flunk "rro: the write reached the host"

	# tmpcopyup: a tmpfs that starts with the image's /etc files
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "grep -c root /etc/passwd; touch /etc/new && echo written"]
		| .mounts += [{"destination": "/etc", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup", "mode=755"]}]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "${lines[1]}" written "tmpfs /etc is writable"
	[ "${lines[0]}" -ge 1 ] || flunk "tmpcopyup: /etc/passwd not copied:" "$output"
	[ ! -e "$ROOTFS/etc/new" ] || flunk "tmpcopyup: the write reached the image"

	# refused: idmap (not supported), tmpcopyup on a bind mount
	make_bundle "$BUNDLE" ".mounts += [{\"destination\": \"/mnt\", \"type\": \"bind\", \"source\": \"$src\", \"options\": [\"bind\", \"idmap\"]}]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_match "$stderr" 'idmap' "error names the option"
	make_bundle "$BUNDLE" ".mounts += [{\"destination\": \"/mnt\", \"type\": \"bind\", \"source\": \"$src\", \"options\": [\"bind\", \"tmpcopyup\"]}]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_eq "$(qp list --quiet)" "" "pods left"
}

@test "a pid namespace joined by path (CRI's shareProcessNamespace): both pods see each other's processes" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	local pid
	pid=$(pod_field "$ID" pid)
	make_bundle "$TEST_DIR/b2" ".process.args = [\"sh\", \"-c\", \"cat /proc/1/comm; echo \$\$\"]
		| .linux.namespaces = [.linux.namespaces[] | if .type == \"pid\" then .path = \"/proc/$pid/ns/pid\" else . end]"
	run --separate-stderr qp run "$ID2" --bundle "$TEST_DIR/b2"
	assert_status 0
	assert_eq "${lines[0]}" qpod-testhelper "PID 1 seen from the second pod: the first pod's workload"
	[ "${lines[1]}" -gt 1 ] || flunk "the second pod's shell is pid ${lines[1]} in the shared namespace"
	# a path that is not a pid namespace is refused
	make_bundle "$TEST_DIR/b3" '.linux.namespaces = [.linux.namespaces[] | if .type == "pid" then .path = "/proc/self/ns/net" else . end]'
	run --separate-stderr qp run "$ID2" --bundle "$TEST_DIR/b3"
	assert_qpod_error 125
	assert_contains "$stderr" "pid namespace"
	qp delete --force "$ID"
	assert_eq "$(qp list --quiet)" "" "pods left"
}

# hold_ns NSFILE UNSHARE-OPTIONS...: a namespace to join, $HOLDER: a
# process of ours that sleeps in a new one (NSFILE: its name in /proc/PID/ns)
hold_ns() {
	local f=$1
	shift
	unshare "$@" sleep 60 &
	HOLDER=$!
	wait_for 100 sh -c "[ \"\$(readlink /proc/$HOLDER/ns/$f)\" != \"\$(readlink /proc/self/ns/$f)\" ]"
}

# `qp run $ID --bundle $BUNDLE` under `run`, then the holder goes
run_and_release() {
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	kill "$HOLDER"
	wait "$HOLDER" 2>/dev/null || true
}

@test "a mount namespace joined by path: the pod's rootfs is built in it" {
	hold_ns mnt --mount --propagation private
	make_bundle "$BUNDLE" "$(helper_args hostname) | .linux.namespaces = [.linux.namespaces[] | if .type == \"mount\" then .path = \"/proc/$HOLDER/ns/mnt\" else . end]"
	run_and_release
	assert_status 0
}

@test "time namespace: linux.timeOffsets shift the pod's boottime and monotonic clocks; exec joins it" {
	host_has time_ns || skip "this kernel has no time namespaces (Linux >= 5.6, CONFIG_TIME_NS)"
	make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.namespaces += [{\"type\": \"time\"}]
		| .linux.timeOffsets = {\"boottime\": {\"secs\": 864000, \"nanosecs\": 7}, \"monotonic\": {\"secs\": 3600}}"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	local pid host_up
	pid=$(pod_field "$ID" pid)
	[ "$(readlink "/proc/$pid/ns/time")" != "$(readlink /proc/self/ns/time)" ] || flunk "the pod shares our time namespace"
	# the kernel's record of the pod's offsets (clock ids: 1 monotonic, 7 boottime)
	run --separate-stderr qp exec "$ID" cat /proc/self/timens_offsets
	assert_status 0
	grep -Eqx 'monotonic +3600 +0' <<<"$output" || flunk "monotonic offset: $output"
	grep -Eqx 'boottime +864000 +7' <<<"$output" || flunk "boottime offset: $output"
	# and the clock itself: uptime (boottime) is ten days ahead of ours
	host_up=$(cut -d. -f1 /proc/uptime)
	run --separate-stderr qp exec "$ID" cat /proc/uptime
	assert_status 0
	local up=${output%%.*}
	[ "$up" -ge $((host_up + 864000)) ] && [ "$up" -lt $((host_up + 864000 + 600)) ] ||
		flunk "uptime in the pod: $up, ours: $host_up (+864000 expected)"
	# qpod itself, its hooks and its later children stay in our time namespace
	[ "$(cut -d. -f1 /proc/uptime)" -lt $((host_up + 600)) ] || flunk "our own clock moved"
	qp delete --force "$ID"
}

@test "no mount namespace (runc's behaviour): built in ours on a private bind, chroot()ed; exec enters it; delete leaves no mount" {
	# a copy of the rootfs: its mounts are in our namespace while the pod runs
	local rootfs=$TEST_DIR/rootfs
	cp -a "$ROOTFS" "$rootfs"
	make_bundle "$BUNDLE" ".root.path = \"$rootfs\" | $(helper_args sleep 60)
		| .linux.namespaces = [.linux.namespaces[] | select(.type != \"mount\")]"
	local ours before
	ours=$(readlink /proc/self/ns/mnt)
	before=$(findmnt -n -o PROPAGATION /)
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	local pid
	pid=$(pod_field "$ID" pid)
	assert_eq "$(readlink "/proc/$pid/ns/mnt")" "$ours" "the pod's mount namespace"
	assert_eq "$(readlink "/proc/$pid/root")" "$rootfs" "the pod's root"
	grep -qF " $rootfs/proc " /proc/self/mountinfo || flunk "no proc of the pod's on $rootfs/proc in our namespace"
	assert_eq "$(findmnt -n -o PROPAGATION /)" "$before" "propagation of our /"
	# the masked paths are applied there too, and exec runs inside the root
	masked_on_host
	run --separate-stderr qp exec "$ID" sh -c "test -e $HELPER && echo in-root; test -e /proc/self && echo proc; $HELPER stat ${MASKED_FILES[0]}"
	assert_status 0
	assert_eq "${lines[0]}" in-root
	assert_eq "${lines[1]}" proc
	assert_match "${lines[2]}" '^chr [0-7]+ 1:3$' "${MASKED_FILES[0]} in the pod (masked: /dev/null)"
	qp delete --force "$ID"
	! grep -qF " $rootfs" /proc/self/mountinfo || flunk "mounts left:" "$(grep -F " $rootfs" /proc/self/mountinfo)"
}

# refused_bundle JQ-FILTER NEEDLE: a bundle with the filter fails create
# with one qpod error line containing NEEDLE
refused_bundle() {
	make_bundle "$BUNDLE" "$1"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_contains "$stderr" "$2"
}

@test "time namespace: offsets without a new time namespace, an unknown clock, bad nanosecs are refused" {
	local need="linux.timeOffsets: need a new time namespace"
	refused_bundle '.linux.timeOffsets = {"boottime": {"secs": 10}}' "$need"
	refused_bundle '.linux.namespaces += [{"type": "time", "path": "/proc/self/ns/time"}] | .linux.timeOffsets = {"boottime": {"secs": 10}}' "$need"
	refused_bundle '.linux.namespaces += [{"type": "time"}] | .linux.timeOffsets = {"realtime": {"secs": 10}}' 'unknown clock "realtime"'
	refused_bundle '.linux.namespaces += [{"type": "time"}] | .linux.timeOffsets = {"monotonic": {"secs": 1, "nanosecs": 1000000000}}' \
		"linux.timeOffsets.monotonic.nanosecs"
	# a vm pod's clocks are the guest's: offsets cannot be applied there
	refused_bundle '.annotations["qpod.mode"] = "vm" | .linux.namespaces += [{"type": "time"}] | .linux.timeOffsets = {"boottime": {"secs": 10}}' \
		"linux.timeOffsets: not supported for vm pods"
}

@test "time namespace joined by path: the pod's uptime is the holder's" {
	host_has time_ns || skip "this kernel has no time namespaces (Linux >= 5.6, CONFIG_TIME_NS)"
	hold_ns time --time --boottime 500000
	make_bundle "$BUNDLE" ".process.args = [\"cat\", \"/proc/uptime\"] | .linux.namespaces += [{\"type\": \"time\", \"path\": \"/proc/$HOLDER/ns/time\"}]"
	run_and_release
	assert_status 0
	local host_up
	host_up=$(cut -d. -f1 /proc/uptime)
	[ "${output%%.*}" -ge $((host_up + 500000 - 600)) ] || flunk "uptime in the pod: $output, ours: $host_up (+500000 expected)"
}
