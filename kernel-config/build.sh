#!/bin/bash
# Builds the qpod microVM guest kernel (x86_64) from Debian's linux-source
# package: the patches in kernel-config/patches/ (in name order), then
# tinyconfig + kernel-config/guest.config. Results are cached outside the
# checkout in ${QPOD_CACHE:-/var/cache/qpod}/kernel/<key>/ with
# key = <kernel package version>-<first 16 hex of sha256(guest.config and
# the patches)>; kernel/current points at the last key built or found.
#
# Usage: kernel-config/build.sh [OUTDIR]
#   OUTDIR (optional): also copy vmlinux, bzImage and config there.
# Environment: QPOD_CACHE (cache root), JOBS (default: nproc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fragment="$here/guest.config"
patches=("$here"/patches/*.patch)
[ -e "${patches[0]}" ] || patches=()
cache_root="${QPOD_CACHE:-/var/cache/qpod}/kernel"
outdir="${1:-}"
jobs="${JOBS:-$(nproc)}"
arch=x86_64

die() { echo "kernel-config/build.sh: $*" >&2; exit 1; }
log() { echo "kernel: $*"; }

[ -r "$fragment" ] || die "missing $fragment"
case "$(uname -m)" in
x86_64) ;;
*) [ -n "${CROSS_COMPILE:-}" ] || die "host is $(uname -m); set CROSS_COMPILE for an x86_64 toolchain" ;;
esac

# ---- build dependencies ----------------------------------------------------
# Debian packages needed to build the kernel (tools/deps.sh lists the same).
build_deps=(build-essential bc flex bison libelf-dev libssl-dev xz-utils)

apt_install() {
	[ "$(id -u)" -eq 0 ] || die "need root to apt-get install $*"
	log "installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; } ||
		die "apt-get install $* failed"
}

missing=()
for p in "${build_deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# ---- kernel source -----------------------------------------------------------
find_tarball() {
	ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1
}
tarball=$(find_tarball)
if [ -z "$tarball" ]; then
	apt_install linux-source
	tarball=$(find_tarball)
	[ -n "$tarball" ] || die "linux-source installed but no /usr/src/linux-source-*.tar.xz"
fi
# Exact version from the package that owns the tarball (6.1.192-3), else
# from the file name (6.1).
pkg=$(dpkg-query -S "$tarball" 2>/dev/null | cut -d: -f1 | head -n 1 || true)
kver=""
[ -z "$pkg" ] || kver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
if [ -z "$kver" ]; then
	kver=$(basename "$tarball" .tar.xz)
	kver=${kver#linux-source-}
fi
kver=$(printf '%s' "$kver" | tr -c 'A-Za-z0-9.+_-' '_')

cfg_hash=$(cat "$fragment" "${patches[@]}" | sha256sum | cut -c1-16)
key="$kver-$cfg_hash"
dest="$cache_root/$key"

install_outdir() {
	[ -n "$outdir" ] || return 0
	mkdir -p "$outdir"
	local f
	for f in vmlinux bzImage config; do
		cp -f "$dest/$f" "$outdir/.$f.tmp"
		mv -f "$outdir/.$f.tmp" "$outdir/$f"
	done
	echo "$key" >"$outdir/.key.tmp" && mv -f "$outdir/.key.tmp" "$outdir/KEY"
	log "copied to $outdir"
}

point_current() {
	ln -sfn "$key" "$cache_root/.current.tmp"
	mv -fT "$cache_root/.current.tmp" "$cache_root/current"
}

report() {
	log "version $kver, config sha256 $cfg_hash"
	echo "vmlinux: $dest/vmlinux ($(stat -c %s "$dest/vmlinux") bytes)"
	echo "bzImage: $dest/bzImage ($(stat -c %s "$dest/bzImage") bytes)"
	echo "config:  $dest/config"
	echo "current: $cache_root/current -> $key"
}

up_to_date() { [ -f "$dest/vmlinux" ] && [ -f "$dest/vmlinux.full" ] && [ -f "$dest/bzImage" ]; }

# The vmlinux that VMs boot has no symbol table: QEMU reads and sorts an
# ELF's symbols when it loads one (for its own debugging), ~11 ms of every
# cold boot here. vmlinux.full keeps them (addr2line, initcall_debug).
strip_kernel() {
	objcopy --strip-all "$1" "$2.tmp" && mv -f "$2.tmp" "$2"
}

mkdir -p "$cache_root"
if up_to_date; then
	point_current
	echo "kernel up to date: $dest"
	report
	install_outdir
	exit 0
fi

# ---- lock: one build at a time per cache ------------------------------------
exec 9>"$cache_root/.lock"
if ! flock -n 9; then
	log "another build holds $cache_root/.lock, waiting"
	flock 9
fi
if [ -f "$dest/vmlinux" ] && [ -f "$dest/bzImage" ] && [ ! -f "$dest/vmlinux.full" ]; then
	# a cache entry from before the split: its vmlinux has the symbols
	log "splitting $dest/vmlinux into vmlinux (stripped) and vmlinux.full"
	cp -f "$dest/vmlinux" "$dest/vmlinux.full"
	strip_kernel "$dest/vmlinux.full" "$dest/vmlinux" || die "objcopy --strip-all $dest/vmlinux failed"
fi
if up_to_date; then # built by whoever held the lock
	point_current
	echo "kernel up to date: $dest"
	report
	install_outdir
	exit 0
fi

work=$(mktemp -d "$cache_root/.build-$key.XXXXXX")
ticker=""
cleanup() {
	[ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
buildlog="$cache_root/last-build.log"
: >"$buildlog"

log "unpacking $tarball into $work"
tar -xf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$src" ] && [ -f "$src/Makefile" ] || die "no kernel tree in $tarball"

for p in "${patches[@]}"; do
	log "applying $(basename "$p")"
	patch -d "$src" -p1 --forward --batch --quiet <"$p" >>"$buildlog" 2>&1 ||
		die "$(basename "$p") does not apply to $(basename "$tarball") (see $buildlog): update the patch"
done

kmake() {
	make -C "$src" ARCH=$arch ${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} \
		KBUILD_BUILD_USER=qpod KBUILD_BUILD_HOST=qpod "$@"
}

# ---- configuration -----------------------------------------------------------
log "configuring: tinyconfig + $(basename "$fragment")"
kmake -s tinyconfig >>"$buildlog" 2>&1 || die "make tinyconfig failed (see $buildlog)"
(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$fragment") >>"$buildlog" 2>&1 ||
	die "merge_config.sh failed (see $buildlog)"
kmake -s olddefconfig >>"$buildlog" 2>&1 || die "make olddefconfig failed (see $buildlog)"

# Every line of the fragment must survive olddefconfig: "CONFIG_X=v" must be
# present verbatim, "# CONFIG_X is not set" must not be set to anything.
# A symbol that is missing means an unmet dependency or a renamed option.
bad=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" "$src/.config" || {
			sym=${line%%=*}
			got=$(grep -m1 -E "^($sym=|# $sym is not set)" "$src/.config" || echo "absent")
			bad+=("$line (got: $got)")
		}
		;;
	"# CONFIG_"*" is not set")
		sym=${line#"# "}
		sym=${sym%" is not set"}
		if grep -q "^$sym=" "$src/.config"; then
			bad+=("$line (got: $(grep -m1 "^$sym=" "$src/.config"))")
		fi
		;;
	esac
done <"$fragment"
if [ ${#bad[@]} -gt 0 ]; then
	echo "kernel-config/build.sh: options of $(basename "$fragment") not in the final .config:" >&2
	printf '  %s\n' "${bad[@]}" >&2
	exit 1
fi
log "config verified: all $(grep -cE '^(CONFIG_|# CONFIG_.* is not set)' "$fragment") fragment lines present"

# ---- build -------------------------------------------------------------------
log "building with -j$jobs (log: $buildlog)"
start=$(date +%s)
(
	while sleep 30; do
		n=$(grep -cE '^  (CC|AS|LD|AR)' "$buildlog" || true)
		last=$(grep -E '^  [A-Z]' "$buildlog" | tail -n 1 | sed 's/^ *//')
		echo "kernel: $(($(date +%s) - start))s, $n steps done, at: $last"
	done
) &
ticker=$!
if ! kmake -j"$jobs" bzImage >>"$buildlog" 2>&1; then
	tail -n 30 "$buildlog" >&2
	die "kernel build failed after $(($(date +%s) - start))s (full log: $buildlog)"
fi
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
ticker=""
log "built in $(($(date +%s) - start))s"

# ---- install into the cache, atomically --------------------------------------
stage="$work/out"
mkdir -p "$stage"
cp "$src/vmlinux" "$stage/vmlinux.full"
strip_kernel "$src/vmlinux" "$stage/vmlinux" || die "objcopy --strip-all vmlinux failed"
cp "$src/arch/x86/boot/bzImage" "$stage/bzImage"
cp "$src/.config" "$stage/config"
cp "$fragment" "$stage/guest.config"
[ ${#patches[@]} -eq 0 ] || { mkdir -p "$stage/patches" && cp "${patches[@]}" "$stage/patches/"; }
kmake -s kernelrelease >"$stage/kernelrelease" 2>/dev/null || true
rm -rf "$dest"
mv -T "$stage" "$dest"
point_current
report
install_outdir
