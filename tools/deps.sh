#!/bin/sh
# tools/deps.sh — install the Debian packages qpod needs to build, test and
# benchmark. Each package is listed once. Idempotent: installs only what is
# missing, so `make check`, `make demo` and `make deps` call it every time.
#   tools/deps.sh --check   install nothing: name what is missing, exit 1
#                           (what a plain `make` does: it builds, it does
#                           not install packages)
set -eu
check_only=false
[ "${1:-}" = --check ] && check_only=true

PKGS="
build-essential
autoconf
automake
pkg-config
libseccomp-dev
libcap-dev
libnl-3-dev
libnl-route-3-dev
libyajl-dev
libvirt-dev
libvirt-daemon
libvirt-daemon-driver-qemu
libvirt-daemon-system
libvirt-clients
libcmocka-dev
busybox-static
iproute2
jq
curl
musl-tools
qemu-system-x86
qemu-system-data
bc
flex
bison
libelf-dev
libssl-dev
xz-utils
kmod
linux-source
runc
crun
runsc
python3
libxml2-utils
chromium
containerd
podman
conmon
containernetworking-plugins
python3-grpcio
python3-protobuf
protobuf-compiler
python3-yaml
"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if $check_only; then
	echo "qpod: build: missing Debian packages:$missing (make deps, make check or make demo install them)" >&2
	exit 1
fi

if [ "$(id -u)" != 0 ]; then
	echo "qpod: deps: missing Debian packages:$missing (run as root, or: apt-get install$missing)" >&2
	exit 1
fi
echo "==> installing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
