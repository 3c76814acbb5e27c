# tests/cli/host_features.bash — what kind of host the suite runs on: the
# kernel, the cgroup layout (v2, hybrid, v1; which v1 controllers share a
# mount), /dev/kvm, and the optional kernel features some tests depend on.
# One place decides "does this host have X" for both the profile that
# tests/run.sh prints at the start of `make check` and the tests themselves
# (helpers.bash loads this file), so a test asserts what its host supports
# and a skip names the feature the host lacks.
#
#   host_has FEATURE        0 if the host has it (see host_feature_names)
#   host_cgroup_layout      v2 | hybrid | v1
#   host_cgroup_v1_mounts   one line per v1 hierarchy: "MOUNTPOINT CONTROLLERS"
#   host_kvm_state          absent | unusable (reason) | opens | usable | ...
#   host_profile            the whole profile, a few lines of text
#
# Probing a cgroup file that the kernel hides on the root cgroup (blkio and
# io weights are CFTYPE_NOT_ON_ROOT) makes a short-lived child cgroup
# "qpod-probe-PID" and removes it at once.

HF_CG=${CGROUP_FS:-/sys/fs/cgroup}

host_cgroup_layout() {
	if [ "$(stat -f -c %T "$HF_CG" 2>/dev/null)" = cgroup2fs ]; then
		echo v2
	elif [ "$(stat -f -c %T "$HF_CG/unified" 2>/dev/null)" = cgroup2fs ]; then
		echo hybrid
	else
		echo v1
	fi
}

# "MOUNTPOINT CONTROLLERS" for each v1 hierarchy (controllers comma-joined
# as the kernel lists them in the super options: "cpu,cpuacct" when co-mounted)
host_cgroup_v1_mounts() {
	hf_mounts cgroup | awk '{
		n = split($2, o, ","); c = ""
		for (i = 1; i <= n; i++)
			if (o[i] != "rw" && o[i] != "ro" && o[i] !~ /^(release_agent|clone_children|noprefix|xattr|cpuset_v2_mode|favordynmods)/)
				c = c (c == "" ? "" : ",") o[i]
		print $1, c
	}'
}

# hf_mounts FSTYPE: "MOUNTPOINT SUPER-OPTIONS" of each mount of FSTYPE (the
# optional fields of mountinfo end at the "-" separator)
hf_mounts() {
	awk -v t="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == t) print $5, $(i + 3) }' /proc/self/mountinfo
}

# the mount point of the v1 hierarchy that holds CONTROLLER ("" if none)
hf_v1_dir() {
	host_cgroup_v1_mounts | awk -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) { print $1; exit } }'
}

# the cgroup2 tree's mount point ("" if none)
hf_v2_dir() {
	case $(host_cgroup_layout) in
	v2) echo "$HF_CG" ;;
	hybrid) echo "$HF_CG/unified" ;;
	esac
}

# hf_cg_probe V1-CONTROLLER V2-CONTROLLER FILE...: is any FILE in a child
# cgroup of the hierarchy that carries the controller (v1 first, then the
# cgroup2 tree where the controller is available there)?
hf_cg_probe() {
	local v1=$1 v2=$2 dir="" probe f found=1
	shift 2
	dir=$(hf_v1_dir "$v1")
	if [ -z "$dir" ]; then
		dir=$(hf_v2_dir)
		[ -n "$dir" ] && grep -qw "$v2" "$dir/cgroup.controllers" 2>/dev/null || return 1
	fi
	probe=$dir/qpod-probe-$$
	mkdir "$probe" 2>/dev/null || return 1
	if [ "$dir" = "$HF_CG" ] && [ -f "$dir/cgroup.controllers" ] &&
		! grep -qw "$v2" "$dir/cgroup.subtree_control"; then
		# on a v2 host a controller shows its files in children only when
		# the root delegates it; qpod enables it the same way for its pods
		# (a hybrid host's unified tree is left as it is)
		echo "+$v2" >"$dir/cgroup.subtree_control" 2>/dev/null
	fi
	for f in "$@"; do
		[ -e "$probe/$f" ] && { found=0; break; }
	done
	rmdir "$probe"
	return $found
}

# the v1 controllers and the cgroup2 tree's controllers, for "controller X"
hf_has_controller() {
	[ -n "$(hf_v1_dir "$1")" ] && return 0
	local d
	d=$(hf_v2_dir)
	[ -n "$d" ] && grep -qw "$1" "$d/cgroup.controllers" 2>/dev/null
}

hf_v2_mount_opt() {
	local d
	d=$(hf_v2_dir)
	[ -n "$d" ] && hf_mounts cgroup2 | awk -v d="$d" '$1 == d { print $2 }' | grep -qw "$1"
}

host_feature_names() {
	echo blkio_weight blkio_throttle cpuset hugetlb rdma misc cpu_idle memory_kmem swap_accounting \
		psi time_ns net_cls net_prio nsdelegate memory_recursiveprot ksm tun vhost_net vhost_vsock
}

host_has() {
	case $1 in
	blkio_weight) hf_cg_probe blkio io blkio.weight blkio.bfq.weight io.weight io.bfq.weight ;;
	blkio_throttle) hf_cg_probe blkio io blkio.throttle.read_bps_device io.max ;;
	cpuset | hugetlb | rdma | misc | net_cls | net_prio) hf_has_controller "$1" ;;
	cpu_idle) hf_cg_probe cpu cpu cpu.idle ;;
	memory_kmem) hf_cg_probe memory memory memory.kmem.limit_in_bytes ;;
	swap_accounting) hf_cg_probe memory memory memory.memsw.limit_in_bytes memory.swap.max ;;
	psi) [ -r /proc/pressure/cpu ] ;;
	time_ns) [ -e /proc/self/ns/time ] ;;
	nsdelegate | memory_recursiveprot) hf_v2_mount_opt "$1" ;;
	ksm) [ -w /sys/kernel/mm/ksm/run ] ;;
	tun) [ -c /dev/net/tun ] ;;
	vhost_net) [ -c /dev/vhost-net ] ;;
	vhost_vsock) [ -c /dev/vhost-vsock ] ;;
	*) echo "host_has: unknown feature '$1'" >&2; return 2 ;;
	esac
}

# absent | "present, does not open (ERR)" | "opens; qpod's probe: usable|unusable|not run yet"
host_kvm_state() {
	[ -e /dev/kvm ] || { echo absent; return; }
	local err
	if ! err=$( (exec 3<>/dev/kvm) 2>&1); then
		echo "present, does not open (${err##*: })"
		return
	fi
	local cache=${QPOD_CACHE:-/var/cache/qpod}/kvm-probe verdict="not run yet"
	# runtime/vm/kvm_probe.c caches "KEY\nok" or "KEY\nno REASON"
	if [ -r "$cache" ]; then
		case $(sed -n 2p "$cache") in
		ok) verdict=usable ;;
		"no "*) verdict="unusable: $(sed -n 's/^no //p' "$cache")" ;;
		esac
	fi
	echo "opens; qpod's probe: $verdict"
}

host_profile() {
	local f have="" lack="" v1
	for f in $(host_feature_names); do
		if host_has "$f"; then have+=" $f"; else lack+=" $f"; fi
	done
	v1=$(host_cgroup_v1_mounts | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }')
	echo "host: Linux $(uname -r) $(uname -m), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(nproc) cpus, $(awk '/^MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
	echo "host: cgroups $(host_cgroup_layout)${v1:+; v1 hierarchies: $v1}$(d=$(hf_v2_dir); [ -n "$d" ] && echo "; cgroup2 at $d: $(cat "$d/cgroup.controllers" 2>/dev/null)")"
	echo "host: /dev/kvm $(host_kvm_state)"
	echo "host: has:${have:- none}"
	echo "host: lacks:${lack:- none}"
}
