#!/bin/sh
# Installs the Debian packages shmam needs, if any are missing (we run as root on
# a fresh Debian machine; elsewhere, prints what to install).
#   scripts/deps.sh         everything: make check, make run (sysbench and
#                           stress-ng: the locks inside real programs; xz: the
#                           lock preload's real program; man-db and groff-base:
#                           the man pages' checks; the Python package's tests
#                           and benchmark too)
#   scripts/deps.sh core    the library and make check-core: a compiler,
#                           libatomic_ops and Check
set -e
core="build-essential pkg-config libatomic-ops-dev check libsubunit-dev"
need="$core python3 mpich libmpich-dev gnuplot-nox libfftw3-dev libck-dev clang-format libboost-dev \
      python3-cffi python3-pytest python3-zmq libzmq3-dev sysbench stress-ng xz-utils man-db \
      groff-base"
[ "${1:-}" = core ] && need=$core
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
