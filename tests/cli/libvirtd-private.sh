#!/bin/sh
# tests/cli/libvirtd-private.sh — a libvirtd of the tests' own, never the
# host's: its configuration, sockets, run, state, cache and log directories
# are under DIR (bind-mounted over /etc/libvirt, /run/libvirt,
# /var/lib/libvirt, /var/cache/libvirt and /var/log/libvirt in a mount
# namespace of its own, with a private copy of /etc/passwd and /etc/group
# that adds the libvirt-qemu user Debian's build wants to exist), no
# cgroups of libvirt's, and its stdio goes to files (no virtlogd).  QEMU
# runs as one of two users (MODE):
#   root   as root, no security driver, no namespaces, no dynamic ownership
#   stock  as Debian's qemu.conf has it: libvirt-qemu:libvirt-qemu, dynamic (and
#          remembered) ownership, the host's security driver if it has
#          one, QEMU in a mount namespace of libvirt's
# A system libvirtd, if one runs, is not touched: ours sees none of its
# directories, and clients reach ours only through
# qemu+unix:///system?socket=DIR/sock/libvirt-sock.  For a QEMU that is
# not root, qpod puts what QEMU opens in QPOD_LIBVIRT_RUNDIR (DIR/qemu-run
# here, which start prints too): a shared mount in the host's namespace,
# so that qpod's idmapped mounts there reach this daemon's namespace (its
# mounts are the host's slaves).
#
#   libvirtd-private.sh start DIR [NETNS [MODE]]  start it (in network
#       namespace /run/netns/NETNS if given, "-" for none; MODE root by
#       default); prints its URI, then the QPOD_LIBVIRT_RUNDIR for it
#   libvirtd-private.sh stop DIR           destroy its domains, stop it (by
#       its pid), remove the mounts and mount points it created
set -eu

die() { echo "libvirtd-private: $*" >&2; exit 1; }

cmd=${1:-}
B=${2:-}
[ -n "$B" ] || die "usage: $0 start|stop DIR [NETNS]"
URI="qemu+unix:///system?socket=$B/sock/libvirt-sock"

case $cmd in
start)
	command -v libvirtd >/dev/null || die "libvirtd is not installed (tools/deps.sh installs libvirt-daemon)"
	mode=${4:-root}
	case $mode in root | stock) ;; *) die "MODE must be root or stock, not $mode" ;; esac
	if [ "$mode" = stock ] && ! grep -q '^libvirt-qemu:' /etc/passwd; then
		die "no libvirt-qemu user on this host (tools/deps.sh installs libvirt-daemon-system, which makes it)"
	fi
	mkdir -p "$B/etc" "$B/run" "$B/lib" "$B/log" "$B/cache" "$B/sock" "$B/qemu-run"
	# QEMU's user passes DIR to reach qemu-run, and lists neither
	chmod 0711 "$B" "$B/qemu-run"
	mount --bind "$B/qemu-run" "$B/qemu-run"
	mount --make-shared "$B/qemu-run"
	cat >"$B/etc/libvirtd.conf" <<EOF
unix_sock_dir = "$B/sock"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:$B/log/libvirtd.log"
EOF
	if [ "$mode" = root ]; then
		cat >"$B/etc/qemu.conf" <<EOF
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
namespaces = [ ]
stdio_handler = "file"
cgroup_controllers = [ ]
EOF
	else
		cat >"$B/etc/qemu.conf" <<EOF
user = "libvirt-qemu"
group = "libvirt-qemu"
dynamic_ownership = 1
remember_owner = 1
stdio_handler = "file"
cgroup_controllers = [ ]
EOF
	fi
	cp /etc/passwd "$B/passwd"
	cp /etc/group "$B/group"
	grep -q '^libvirt-qemu:' "$B/passwd" || echo 'libvirt-qemu:x:64055:64055::/var/lib/libvirt:/usr/sbin/nologin' >>"$B/passwd"
	grep -q '^libvirt-qemu:' "$B/group" || echo 'libvirt-qemu:x:64055:' >>"$B/group"
	grep -q '^kvm:' "$B/group" || echo 'kvm:x:64056:' >>"$B/group"
	: >"$B/created-dirs"
	for d in /etc/libvirt /run/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
		if [ ! -d "$d" ]; then
			mkdir -p "$d"
			echo "$d" >>"$B/created-dirs"
		fi
	done
	enter=""
	[ -n "${3:-}" ] && [ "$3" != - ] && enter="nsenter --net=/run/netns/$3 --"
	# shellcheck disable=SC2016,SC2086 # expanded by the inner shell; enter is words
	setsid $enter unshare -m --propagation slave sh -c '
		B=$1
		mount --bind "$B/passwd" /etc/passwd && mount --bind "$B/group" /etc/group &&
		mount --bind "$B/etc" /etc/libvirt && mount --bind "$B/run" /run/libvirt &&
		mount --bind "$B/lib" /var/lib/libvirt && mount --bind "$B/log" /var/log/libvirt &&
		mount --bind "$B/cache" /var/cache/libvirt &&
		exec libvirtd -f /etc/libvirt/libvirtd.conf -p "$B/libvirtd.pid"' _ "$B" \
		</dev/null >"$B/libvirtd.out" 2>&1 &
	echo $! >"$B/launcher.pid"
	i=0
	until virsh -q -c "$URI" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || die "libvirtd did not answer within 20 s: $(tail -3 "$B/libvirtd.out" "$B/log/libvirtd.log" 2>/dev/null)"
		sleep 0.1
	done
	echo "$URI"
	echo "$B/qemu-run"
	;;
stop)
	if [ -f "$B/launcher.pid" ]; then
		for dom in $(virsh -q -c "$URI" list --name 2>/dev/null); do
			virsh -q -c "$URI" destroy "$dom" >/dev/null 2>&1 || true
		done
		# the launcher's pid is libvirtd's (each step execs the next)
		pid=$(cat "$B/launcher.pid")
		kill -TERM "$pid" 2>/dev/null || true
		i=0
		while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$pid" 2>/dev/null || true
		rm -f "$B/launcher.pid"
	fi
	if mountpoint -q "$B/qemu-run"; then
		umount "$B/qemu-run"
	fi
	if [ -f "$B/created-dirs" ]; then
		while read -r d; do rmdir "$d" 2>/dev/null || true; done <"$B/created-dirs"
		rm -f "$B/created-dirs"
	fi
	;;
*) die "usage: $0 start|stop DIR [NETNS]" ;;
esac
