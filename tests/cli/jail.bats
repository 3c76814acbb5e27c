#!/usr/bin/env bats
# tests/cli/jail.bats — a VM pod's QEMU in its jail (runtime/host/jail.c,
# docs/JAIL.md): its uid/gid, capabilities, seccomp filter, no_new_privs
# and rlimits as /proc shows them, a mount namespace that holds only what
# QEMU needs, and the pod still working through it: exec, the 9p share's
# owners and modes, a template's clone, a bridge network in a private netns.
# QPOD_VM_JAIL=off is the way out (benchmarks), a bad value an error.

load helpers

setup() {
	need_vm
	setup_common
	vm_env
	[ "$(id -u)" = 0 ] || skip "the jail needs root (an unprivileged qpod runs QEMU as itself)"
}

teardown() {
	teardown_common
	if [ -n "${NS:-}" ]; then ip netns del "$NS" 2>/dev/null || true; fi
	if [ -n "${CACHE_SENTINEL:-}" ]; then rm -f "$CACHE_SENTINEL"; fi
}

JAIL_ID_BASE=$((0x50000000))

status_field() { # PID FIELD -> the value of FIELD: in /proc/PID/status
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" | tr -s '\t ' ' ' | sed 's/ $//'
}

# assert_jailed PID: what the jail promises, as /proc shows it
assert_jailed() {
	local pid=$1 id=$((JAIL_ID_BASE + $1))
	assert_eq "$(status_field "$pid" Uid)" "$id $id $id $id" "Uid (real, effective, saved, fs)"
	assert_eq "$(status_field "$pid" Gid)" "$id $id $id $id" "Gid"
	assert_eq "$(status_field "$pid" Groups)" "" "supplementary groups"
	assert_eq "$(status_field "$pid" Seccomp)" 2 "Seccomp (2: a filter)"
	assert_eq "$(status_field "$pid" NoNewPrivs)" 1 "NoNewPrivs"
	# CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID, nothing else anywhere
	local set
	for set in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_eq "$(status_field "$pid" $set)" 000000000000001f "$set"
	done
	assert_match "$(grep '^Max core file size' "/proc/$pid/limits")" ' 0 +0 +bytes' "RLIMIT_CORE"
	assert_match "$(grep '^Max open files' "/proc/$pid/limits")" ' 4096 +4096 ' "RLIMIT_NOFILE"
	# its own mount, network, IPC and UTS namespaces (the network one is
	# not even the pod's: the tap comes in as an fd)
	local ns
	for ns in mnt net ipc uts; do
		[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink /proc/self/ns/$ns)" ] ||
			flunk "QEMU shares the host's $ns namespace"
	done
	assert_eq "$(nsenter --net="/proc/$pid/ns/net" ip -o link show | grep -vc ': lo:')" 0 "links in QEMU's netns but lo"
	# where the host's private places do not exist; of the cache, only the
	# files QEMU needs are bound (the kernel lives there): a file beside
	# them is not visible
	local p cache=${QPOD_CACHE:-/var/cache/qpod}
	CACHE_SENTINEL=$cache/.jail-test-$$
	: >"$CACHE_SENTINEL"
	for p in /root /home /etc/shadow /etc/passwd /run /sys "$CACHE_SENTINEL" "$ROOT/$ID/state.json" \
		"$REPO/Makefile"; do
		[ ! -e "/proc/$pid/root$p" ] || flunk "the jail shows $p"
	done
	# its procfs, as its uid sees it: only the viewer itself (QEMU is not
	# even visible to another process of its uid), no /proc/sys, no sysrq
	local procview
	procview=$(nsenter -t "$pid" -m -S "$id" -G "$id" sh -c 'cd /proc && echo "$$:" * && ls -d sys sysrq-trigger 1 2>/dev/null; true')
	assert_match "$procview" '^([0-9]+): \1 self thread-self$' "/proc in the jail (the viewer's pid: what it lists)"
	# /usr is there, read-only (QEMU and its libraries), the set-uid bits dead
	[ -x "/proc/$pid/root/usr/bin/qemu-system-x86_64" ] || flunk "no QEMU binary in the jail"
	assert_match "$(awk '$5 == "/usr" {print $6}' "/proc/$pid/mountinfo")" '^ro,nosuid,nodev' "/usr's mount options"
	# no descriptor reaches the host's tree but its log (and the shares)
	local fds
	fds=$(find "/proc/$pid/fd" -mindepth 1 -printf '%l\n' | grep '^/' | grep -v -e '^/dev/' -e "^$ROOTFS_COPY" -e '/qemu.log$' -e '/templates/[0-9a-f]*/mem$' || true)
	assert_eq "$fds" "" "QEMU's fds into the host's files"
}

@test "jail: a VM pod's QEMU runs as its own uid with a seccomp filter, no_new_privs, the 9p capabilities only, in a mount namespace of its own" {
	ROOTFS_COPY=$TEST_DIR/rootfs
	cp -a "$ROOTFS" "$ROOTFS_COPY"
	qp_detached run -d --name "$ID" --mode vm --boot cold "$ROOTFS_COPY" -- sleep 600
	local pid
	pid=$(pod_field "$ID" vmm_pid)
	assert_jailed "$pid"
	# the pod works: exec, and the share stays faithful to the guest's owners and modes
	run --separate-stderr qp exec "$ID" sh -c 'echo x >/etc/jailf; chown 1000:1001 /etc/jailf; chmod 4750 /etc/jailf;
		mkdir /etc/jaild; chown 7:8 /etc/jaild; chmod 600 /etc/passwd; head -1 /etc/passwd; chmod 644 /etc/passwd; echo ok'
	assert_status 0
	assert_eq "$output" "root:x:0:0:root:/root:/bin/sh
ok" "exec output"
	assert_eq "$(stat -c '%u:%g %a' "$ROOTFS_COPY/etc/jailf")" "1000:1001 4750" "a guest-made file on the host"
	assert_eq "$(stat -c '%u:%g' "$ROOTFS_COPY/etc/jaild")" "7:8" "a guest-made directory on the host"
	# a guest cannot make host device nodes in its share (no CAP_MKNOD)
	run qp exec "$ID" mknod /etc/jailnull c 1 3
	[ "$status" -ne 0 ] || flunk "mknod of a device node in the share succeeded"
	[ ! -e "$ROOTFS_COPY/etc/jailnull" ] || flunk "a device node appeared in the rootfs"
	run qp delete --force "$ID"
	assert_status 0
}

@test "jail: a template's clone runs jailed, and the template's files stay root's" {
	local tcache=$TEST_DIR/cache pid
	mkdir -p "$tcache"
	ln -s "$(dirname "$(dirname "$VM_KERNEL")")" "$tcache/kernel"
	ROOTFS_COPY=$ROOTFS
	QPOD_CACHE=$tcache qp_detached run -d --name "$ID" --mode vm --boot template "$ROOTFS" -- sleep 600
	pid=$(pod_field "$ID" vmm_pid)
	assert_jailed "$pid"
	run qp exec "$ID" echo clone-ok
	assert_status 0
	assert_eq "$output" clone-ok "exec in the clone"
	# the RAM file it maps is the template's
	grep -q "$tcache/templates/.*/mem" "/proc/$pid/maps" || flunk "the clone does not map the template's RAM file"
	assert_eq "$(find "$tcache/templates" -mindepth 1 ! -user 0 | head -3)" "" "template files not owned by root"
	run qp delete --force "$ID"
	assert_status 0
}

@test "jail: a bridge network in a private netns works through the passed tap fd" {
	NS=qpjail$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	ROOTFS_COPY=$ROOTFS
	qp_detached_ns run -d --name "$ID" --mode vm --net bridge --ip 10.213.4.9 "$ROOTFS" -- sleep 600
	local pid
	pid=$(pod_field "$ID" vmm_pid)
	assert_jailed "$pid"
	run nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" exec "$ID" sh -c 'ping -c 1 -W 5 10.213.4.1 >/dev/null && echo gateway-ok'
	assert_status 0
	assert_eq "$output" gateway-ok "the guest reaches its gateway"
	run nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" delete --force "$ID"
	assert_status 0
	assert_eq "$(ip -n "$NS" -o link show | grep -c ' qp[0-9a-f]\{10\}')" 0 "tap links left"
}

@test "jail: QPOD_VM_JAIL=off runs QEMU unjailed (as root, the host's mounts); another value is refused" {
	QPOD_VM_JAIL=off qp_detached run -d --name "$ID" --mode vm --boot cold "$ROOTFS" -- sleep 600
	local pid
	pid=$(pod_field "$ID" vmm_pid)
	assert_eq "$(status_field "$pid" Uid)" "0 0 0 0" "Uid without the jail"
	assert_eq "$(readlink "/proc/$pid/ns/mnt")" "$(readlink /proc/self/ns/mnt)" "mount namespace without the jail"
	assert_eq "$(status_field "$pid" Seccomp)" 0 "no seccomp filter without the jail"
	run qp delete --force "$ID"
	assert_status 0
	run --separate-stderr env QPOD_VM_JAIL=maybe "$QPOD" --root "$ROOT" run --rm --mode vm --boot cold "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "QPOD_VM_JAIL=maybe: expected on or off"
	assert_eq "$(qp list --quiet)" "" "pods left"
}
