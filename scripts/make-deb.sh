#!/bin/sh
# make-deb.sh: `make deb`: builds pgolab_VERSION_ARCH.deb in the source tree's root with
# Debian's own tools (dpkg-buildpackage on debian/, debhelper), then runs lintian on it and
# fails on a lintian error. The package is built in a copy of the files git knows (tracked and
# untracked, not ignored) under build/deb/, so the work tree, its build outputs and its PGO work
# directories stay out of it, and dpkg-buildpackage's files land under build/deb/ too.
# Missing tools or build dependencies: one line naming the packages to install, exit 1.
set -eu
cd "$(dirname "$0")/.."

need=""
command -v dpkg-buildpackage >/dev/null 2>&1 || need="$need dpkg-dev"
command -v dh >/dev/null 2>&1 || need="$need debhelper"
command -v lintian >/dev/null 2>&1 || need="$need lintian"
command -v git >/dev/null 2>&1 || need="$need git"
if [ -n "$need" ]; then
    echo "make deb: needs the Debian packaging tools: apt-get install$need" >&2
    exit 1
fi
# dpkg-checkbuilddeps prints "Unmet build dependencies: A B (>= 1)"; name them as packages
if ! unmet=$(dpkg-checkbuilddeps 2>&1); then
    pkgs=$(printf '%s\n' "$unmet" | sed -n 's/.*Unmet build dependencies: //p' |
           sed 's/([^)]*)//g; s/|[^ ]*//g' | tr -s ' ')
    echo "make deb: missing build dependencies: apt-get install ${pkgs:-$unmet}" >&2
    exit 1
fi

version=$(sed -n 's/^#define PGOLAB_VERSION "\(.*\)"$/\1/p' src/version.h)
deb_version=$(dpkg-parsechangelog -S Version)
if [ "$version" != "$deb_version" ]; then
    echo "make deb: debian/changelog's version $deb_version is not pgolab's $version" \
         "(src/version.h): add a debian/changelog entry (dch -v $version)" >&2
    exit 1
fi
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
    echo "make deb: $(pwd) is not a git work tree (the package is built from the files git knows)" >&2
    exit 1
}

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
top=build/deb
src=$top/pgolab-$version
rm -rf "$top"
mkdir -p "$src"
git ls-files -z -c -o --exclude-standard | xargs -0 sh -c \
    'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -xf - -C "$src"
echo "make deb: dpkg-buildpackage in $src (log: $top/build.log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) >"$top/build.log" 2>&1; then
    tail -n 30 "$top/build.log"
    echo "make deb: dpkg-buildpackage failed (see $top/build.log)" >&2
    exit 1
fi
deb=pgolab_${version}_$arch.deb
cp "$top/$deb" "$deb"
lintian --fail-on error --info "$deb" >"$top/lintian.log" 2>&1 || {
    cat "$top/lintian.log"
    echo "make deb: lintian reports errors in $deb (above; $top/lintian.log)" >&2
    exit 1
}
echo "make deb: $deb ($(grep -c '^[WI]:' "$top/lintian.log") lintian warnings or notes: $top/lintian.log)"
