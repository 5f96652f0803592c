#!/bin/sh
# Installs the Debian packages shmam needs, if any are missing (we run as root on
# a fresh Debian machine; elsewhere, prints what to install).
set -e
need="build-essential pkg-config python3 libatomic-ops-dev check libsubunit-dev mpich libmpich-dev gnuplot-nox libfftw3-dev libck-dev clang-format libboost-dev"
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "shmam: installing missing packages:$missing"
if [ "$(id -u)" != 0 ]; then
    echo "shmam: not root; please run: apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
