#!/bin/sh
# tools/mkrootfs.sh — build the busybox test rootfs that tests, demo and
# benchmarks run pods in:
#   bin/busybox + one symlink per applet, bin/qpod-testhelper (the static
#   helper from build/tests/helper/), sbin usr/bin usr/sbin, etc/{passwd,group,
#   hostname,hosts}, proc sys dev root, tmp (1777).
# Usage: tools/mkrootfs.sh DEST
#   BUSYBOX          static busybox to use (default /bin/busybox, busybox-static)
#   QPOD_TESTHELPER  helper binary (default build/tests/helper/qpod-testhelper)
# Cached: DEST is rebuilt only when busybox, the helper or this script
# changed (a stamp file holds their checksums).  Built next to DEST and
# renamed into place, under a lock, so a reader never sees half a rootfs.
set -eu

die() { echo "qpod: mkrootfs: $*" >&2; exit 1; }

if [ $# -ne 1 ] || [ -z "$1" ]; then die "usage: tools/mkrootfs.sh DEST"; fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
dest=$1
case $dest in /*) ;; *) dest=$PWD/$dest ;; esac
[ "$dest" != / ] || die "refusing to build a rootfs at /"
busybox=${BUSYBOX:-/bin/busybox}
helper=${QPOD_TESTHELPER:-$repo/build/tests/helper/qpod-testhelper}

[ -x "$busybox" ] || die "$busybox not found (apt-get install busybox-static)"
# a dynamic busybox would need the host's libraries inside the rootfs
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is not statically linked (apt-get install busybox-static)"
fi
[ -x "$helper" ] || die "$helper not found (build it first: make build/tests/helper/qpod-testhelper)"

stamp=$(cat "$busybox" "$helper" "$0" | sha256sum | cut -d' ' -f1)
parent=$(dirname "$dest")
mkdir -p "$parent"

# One builder at a time; the others wait, then find the rootfs up to date.
exec 9>"$dest.lock"
flock 9

if [ -f "$dest/.qpod-rootfs-stamp" ] && [ "$(cat "$dest/.qpod-rootfs-stamp")" = "$stamp" ]; then
	echo "rootfs: $dest is up to date"
	exit 0
fi
echo "rootfs: building $dest (busybox $("$busybox" 2>&1 | head -n1 | sed -n 's/^BusyBox v\([^ ]*\).*/\1/p'))"

tmp=$(mktemp -d "$dest.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
chmod 755 "$tmp"
cd "$tmp"
mkdir -p bin sbin usr/bin usr/sbin etc proc sys dev root tmp var/tmp
chmod 1777 tmp var/tmp
chmod 700 root
cp "$busybox" bin/busybox
cp "$helper" bin/qpod-testhelper
chmod 755 bin/busybox bin/qpod-testhelper
for applet in $("$busybox" --list); do
	case $applet in
	busybox | */* | .*) continue ;;  # never trust a name with a path in it
	esac
	[ -e "bin/$applet" ] || ln -s busybox "bin/$applet"
done

cat >etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >etc/group <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo qpod >etc/hostname
cat >etc/hosts <<'EOF'
127.0.0.1 localhost
::1 localhost
EOF
echo "$stamp" >.qpod-rootfs-stamp
cd /

# swap in: old copy aside, new one in place, old copy removed
if [ -e "$dest" ]; then
	old=$(mktemp -d "$dest.old.XXXXXX")
	mv "$dest" "$old/rootfs"
	mv "$tmp" "$dest"
	rm -rf "$old"
else
	mv "$tmp" "$dest"
fi
trap - EXIT INT TERM
