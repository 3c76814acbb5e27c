#!/bin/bash
# tools/baseline-kernel.sh — the "traditional VM" baseline kernel: Debian's
# linux-image-cloud-amd64 (the versioned package it depends on), fetched with
# `apt-get download` and unpacked with `dpkg-deb -x` — never installed into
# the host's /boot — into
#   ${QPOD_CACHE:-/var/cache/qpod}/baseline-kernel/<kernelrelease>_<debversion>/
#     vmlinuz  config  kernelrelease
#     modules/*.ko  modules/modules.order   (dependencies first)
# with baseline-kernel/current pointing at it.  Only the modules the guest
# needs are kept, with everything they depend on (modinfo's "depends"):
#   required  virtio_pci virtio_console        (the qpod.0 control channel)
#   optional  9p 9pnet_virtio virtio_net       (rootfs share, eth0; Debian's
#             cloud kernel has no 9p at all: CONFIG_NET_9P is not set)
# Modules built into the kernel are skipped; .ko.xz/.ko.zst are decompressed.
# Idempotent: an existing complete <key>/ only prints "up to date".
#
# Usage: tools/baseline-kernel.sh
#   QPOD_BASELINE_PKG  another metapackage (e.g. linux-image-amd64); its
#                      link is then current-<metapackage>, not current
#   QPOD_CACHE         cache root (default /var/cache/qpod)
set -euo pipefail

meta=${QPOD_BASELINE_PKG:-linux-image-cloud-amd64}
cache=${QPOD_CACHE:-/var/cache/qpod}/baseline-kernel
required="virtio_pci virtio_console"
optional="9p 9pnet_virtio virtio_net"

die() { echo "qpod: baseline-kernel: $*" >&2; exit 1; }
log() { echo "baseline-kernel: $*"; }

for t in apt-get apt-cache dpkg-deb modinfo flock; do
	command -v "$t" >/dev/null || die "$t not found (Debian packages apt, dpkg, kmod, util-linux)"
done
case $meta in linux-image-*) ;; *) die "QPOD_BASELINE_PKG \"$meta\" is not a linux-image-* package" ;; esac
link=current
[ "$meta" = linux-image-cloud-amd64 ] || link=current-$meta

# ---- which package and version -------------------------------------------
# The metapackage depends on exactly one versioned image package.
resolve() {
	real=$(apt-cache depends --important "$meta" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	[ -n "$real" ] || return 1
	ver=$(apt-cache show --no-all-versions "$real" 2>/dev/null | awk '$1 == "Version:" { print $2; exit }')
	[ -n "$ver" ]
}
if ! resolve; then
	[ "$(id -u)" = 0 ] || die "$meta unknown to apt and not root to run apt-get update"
	log "apt-get update"
	apt-get update -qq >/dev/null || die "apt-get update failed"
	resolve || die "$meta: no linux-image-<version> dependency found in the apt lists"
fi
release=${real#linux-image-}
key=$(printf '%s_%s' "$release" "$ver" | tr -c 'A-Za-z0-9.+_-' '_')
dest=$cache/$key

up_to_date() {
	[ -s "$dest/vmlinuz" ] && [ -s "$dest/modules/modules.order" ] || return 1
	ln -sfn "$key" "$cache/.$link.tmp" && mv -T "$cache/.$link.tmp" "$cache/$link"
	log "up to date: $dest"
}
up_to_date && exit 0

mkdir -p "$cache" || die "mkdir $cache"
exec 9>"$cache/.lock"
flock 9 || die "lock $cache/.lock"
up_to_date && exit 0 # another run finished it while we waited

tmp=$(mktemp -d "$cache/.stage-$key.XXXXXX") || die "mktemp in $cache"
trap 'rm -rf "$tmp"' EXIT

# ---- fetch and unpack ------------------------------------------------------
log "downloading $real=$ver"
# as root apt drops to the _apt user, which cannot write into our 0700 temp dir
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$real=$ver" >/dev/null) ||
	die "apt-get download $real=$ver failed"
deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || die "apt-get download left no .deb in $tmp"
log "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$tmp/x" || die "dpkg-deb -x $deb failed"
mdir=$tmp/x/lib/modules/$release
[ -f "$tmp/x/boot/vmlinuz-$release" ] || die "$deb has no boot/vmlinuz-$release"
[ -f "$mdir/modules.order" ] || die "$deb has no lib/modules/$release/modules.order"

mkdir -p "$tmp/out/modules"
cp "$tmp/x/boot/vmlinuz-$release" "$tmp/out/vmlinuz"
cp "$tmp/x/boot/config-$release" "$tmp/out/config"
echo "$release" >"$tmp/out/kernelrelease"

# ---- module closure, dependencies first ------------------------------------
# module name -> file (under $mdir); names compare with '-' as '_'
norm() { printf '%s' "$1" | tr '-' '_'; }
modfile() {
	local n
	n=$(norm "$1")
	find "$mdir/kernel" \( -name "$n.ko*" -o -name "$(printf '%s' "$n" | tr _ -).ko*" \) -print -quit
}
builtin() {
	local n
	n=$(norm "$1")
	tr '-' '_' <"$mdir/modules.builtin" | grep -q "/$n\.ko$"
}

order=""  # space-separated names already placed
visit() { # name depth
	local n=$1 f deps d
	case " $order " in *" $n "*) return 0 ;; esac
	[ "$2" -lt 16 ] || die "module dependencies of $n nest deeper than 16"
	if builtin "$n"; then
		log "  $n: built into the kernel"
		order="$order $n"
		return 0
	fi
	f=$(modfile "$n")
	[ -n "$f" ] || return 1
	deps=$(modinfo -F depends "$f") || die "modinfo $f failed"
	for d in ${deps//,/ }; do
		visit "$(norm "$d")" $(($2 + 1)) || die "$n depends on $d, which is not in $real"
	done
	case $f in
	*.ko) cp "$f" "$tmp/out/modules/$n.ko" ;;
	*.ko.xz) xz -dc "$f" >"$tmp/out/modules/$n.ko" || die "xz -d $f" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/out/modules/$n.ko" || die "zstd -d $f" ;;
	*) die "unknown module file type: $f" ;;
	esac
	echo "$n.ko" >>"$tmp/out/modules/modules.order"
	log "  $n.ko$([ -z "$deps" ] || echo " (needs $deps)")"
	order="$order $n"
}

: >"$tmp/out/modules/modules.order"
log "selecting modules"
for m in $required; do
	visit "$m" 0 || die "$real has no module $m (nor built in): the guest could not reach the host"
done
for m in $optional; do
	visit "$m" 0 || log "  $m: not in $real (optional, skipped)"
done
n=$(wc -l <"$tmp/out/modules/modules.order")
[ "$n" -le 64 ] || die "$n modules: more than guest-init loads (64)"

rm -rf "${dest:?}"
mv -T "$tmp/out" "$dest" || die "rename into $dest"
ln -sfn "$key" "$cache/.$link.tmp" && mv -T "$cache/.$link.tmp" "$cache/$link"
log "done: $dest ($n modules, $(du -sk "$dest" | cut -f1) KiB); $cache/$link -> $key"
