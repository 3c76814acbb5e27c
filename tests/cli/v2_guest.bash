# tests/cli/v2_guest.bash — boots the pure cgroup v2 "host" microVM that
# cgroup_v2.bats and cgroup_v2_suite.bats run qpod in: guest-init mounts
# only cgroup2 with every controller of the guest kernel enabled; the host's
# /usr and /etc, the build dir (/qpod), the busybox rootfs (/busybox) and
# tests/cli (/t) are shared read-only.  Loaded after helpers.bash.
#
# v2_guest_run SCRIPT [ARGS...]  (in setup_file): runs /t/SCRIPT in the VM,
#   stdout in $GUEST_OUT, stderr in $GUEST_ERR, qpod's exit status in
#   $V/rc; VM_ROOT and VM_ID name the VM pod for v2_guest_cleanup.
v2_guest_run() {
	local script=$1 args
	shift
	[ "$(id -u)" = 0 ] || skip "the CLI tests need root"
	need_vm
	vm_env
	local cfg
	cfg=$(dirname "$VM_KERNEL")/config
	if [ -f "$cfg" ] && ! grep -qx CONFIG_CGROUP_BPF=y "$cfg"; then
		echo "the guest kernel $VM_KERNEL lacks CONFIG_CGROUP_BPF: rebuild it (make kernel)" >&2
		return 1
	fi
	V=$BATS_FILE_TMPDIR/v2
	export V VM_ROOT=$V/state VM_ID=cgv2-$$ GUEST_OUT=$V/guest.out GUEST_ERR=$V/guest.err
	# the VM's root: mount points, and the usr-merged links into /usr
	mkdir -p "$V/rootfs"/{usr,qpod,busybox,t,etc,proc,sys,dev,tmp,root} "$VM_ROOT"
	ln -s usr/bin "$V/rootfs/bin"
	ln -s usr/sbin "$V/rootfs/sbin"
	ln -s usr/lib "$V/rootfs/lib"
	ln -s usr/lib64 "$V/rootfs/lib64"
	args=$(jq -n --arg s "/t/$script" '["/usr/bin/bash", $s] + $ARGS.positional' --args "$@")
	"$QPOD" spec | jq --arg root "$V/rootfs" --arg build "$QPOD_BUILD" --arg busybox "$ROOTFS" \
		--arg t "$BATS_TEST_DIRNAME" --argjson args "$args" '
		def ro_bind($src; $dst): {destination: $dst, type: "bind", source: $src, options: ["rbind", "ro"]};
		.root.path = $root
		| .annotations["qpod.mode"] = "vm"
		| .process.terminal = false
		| .process.args = $args
		| .linux.resources = {memory: {limit: 268435456}}
		| .mounts = [ro_bind("/usr"; "/usr"), ro_bind($build; "/qpod"), ro_bind($busybox; "/busybox"),
			     ro_bind($t; "/t"), ro_bind("/etc"; "/etc")]' >"$V/config.json"
	timeout 900 "$QPOD" --root "$VM_ROOT" run "$VM_ID" --bundle "$V" </dev/null >"$GUEST_OUT" 2>"$GUEST_ERR"
	echo $? >"$V/rc"
}

v2_guest_cleanup() {
	[ -n "${VM_ROOT:-}" ] || return 0
	"$QPOD" --root "$VM_ROOT" delete --force "$VM_ID" >/dev/null 2>&1 || true
}

# the VM is gone and left nothing on the host
assert_v2_guest_gone() {
	assert_eq "$(ls "$VM_ROOT")" "" "state dirs on the host"
	if pgrep -f "qemu-system.*$VM_ID" >/dev/null || pgrep -f "qemu-system.*$BATS_FILE_TMPDIR" >/dev/null; then
		flunk "a QEMU of the cgroup v2 VM is still running"
	fi
}
