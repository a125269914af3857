#!/bin/sh
# check-layers.sh: src/'s folders stand on floors, and a folder includes only folders on lower
# floors (and itself): the layering docs/ARCHITECTURE.md draws. Run by `make check`; fails with
# one line per include that climbs (or crosses to a sibling on the same floor), naming the file,
# the line and both floors. A new folder must be given a floor here first.
#
# Usage: scripts/check-layers.sh [SRC_DIR]   (default: src)
set -u
SRC=${1:-src}

# floor of a folder, lowest first (siblings share a floor and do not include each other)
floor() {
    case $1 in
    util) echo 0 ;;
    db | metrics | profile | server | stats | store | toolchain) echo 1 ;;
    oltp) echo 2 ;;
    bench) echo 3 ;;
    model) echo 4 ;;
    experiment | report) echo 5 ;;
    pgo) echo 6 ;;
    cli) echo 7 ;;
    *) echo "" ;;
    esac
}

bad=0
out=$(mktemp "${TMPDIR:-/tmp}/check-layers.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
for dir in "$SRC"/*/; do
    from=$(basename "$dir")
    ff=$(floor "$from")
    if [ -z "$ff" ]; then
        echo "check-layers: $SRC/$from/ has no floor: give it one in scripts/check-layers.sh (and docs/ARCHITECTURE.md)"
        bad=1
        continue
    fi
    for f in "$dir"*.c "$dir"*.h; do
        [ -e "$f" ] || continue
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
            sed 's/^\([0-9]*\):.*include[[:space:]]*"\([a-z_]*\)\/.*/\1 \2/' |
            while read -r line to; do
                [ "$to" = "$from" ] && continue
                tf=$(floor "$to")
                if [ -z "$tf" ]; then
                    echo "check-layers: $f:$line includes $to/, which has no floor"
                elif [ "$tf" -ge "$ff" ]; then
                    echo "check-layers: $f:$line: $from/ (floor $ff) includes $to/ (floor $tf); a folder includes only lower floors"
                fi
            done
    done
done >"$out"
if [ -s "$out" ]; then
    cat "$out"
    bad=1
fi
[ "$bad" = 0 ] && echo "check-layers: ok (every include in $SRC/ goes to a lower floor)"
exit "$bad"
