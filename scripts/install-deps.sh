#!/bin/sh
# Install the Debian 12 packages pgolab needs to build, test and run its demo.
# The last line of PKGS is what recipes/*.json require ("package" of each requirement) beyond
# the lines above: the server PGO tests run the mariadb recipe on a stand-in, and
# tests/e2e/pgo_recipes.t checks that every recipe's packages are listed here.
# Idempotent: installs only what is missing and prints nothing when nothing is.
set -eu

PKGS="build-essential pkg-config libsqlite3-dev libjansson-dev libgsl-dev libcmocka-dev
tcl clang llvm lld bolt-16 dpkg-dev perl sqlite3 valgrind
libmariadb-dev libpq-dev mariadb-server mariadb-client postgresql postgresql-15 sysbench
cmake bison jq libdw-dev libjs-chart.js chromium libopenmpi-dev openmpi-bin
iproute2 socat bsdutils bash-completion debhelper lintian patchelf
make libfmt-dev libpcre2-dev libssl-dev zlib1g-dev libncurses-dev protobuf-compiler libzstd-dev
liblz4-dev libicu-dev libprotobuf-dev libprotoc-dev flex"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

# pgolab pgo fetches source packages through its own apt configuration (src/pgo/apt.c:
# deb-src entries in its cache directory), so the system's sources are left as they are.
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

echo "install-deps: installing:${missing:- (none; refreshing package lists)}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
if [ -n "$missing" ]; then
    # pgolab starts its own private servers; keep the packages from starting (and enabling)
    # the system's MariaDB and PostgreSQL services while they install: a policy-rc.d that
    # denies every start, only for the install and only if there is none already.
    policy=/usr/sbin/policy-rc.d
    ours=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null && $SUDO chmod 755 "$policy" && ours=1
    fi
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || rc=$?
    [ "$ours" = 1 ] && $SUDO rm -f "$policy"
    exit "${rc:-0}"
fi
