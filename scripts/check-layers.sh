#!/bin/sh
# check-layers.sh: src/'s folders stand on floors, and a folder includes only folders on lower
# floors (and itself): the layering docs/ARCHITECTURE.md draws. Run by `make check`; fails with
# one line per include that climbs (or crosses to a sibling on the same floor), naming the file,
# the line and both floors. A new folder must be given a floor here first.
#
# Usage: scripts/check-layers.sh [SRC_DIR]   (default: src)
set -u
SRC=${1:-src}

# the floor of each folder, lowest first (siblings share a floor and do not include each other)
FLOORS="util=0
db=1 metrics=1 profile=1 server=1 stats=1 store=1 toolchain=1
oltp=2
bench=3
model=4
experiment=5 report=5
pgo=6
cli=7"

bad=0
out=$(mktemp "${TMPDIR:-/tmp}/check-layers.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
for dir in "$SRC"/*/; do
    from=$(basename "$dir")
    case " $(echo $FLOORS) " in
    *" $from="*) ;;
    *)
        echo "check-layers: $SRC/$from/ has no floor: give it one in scripts/check-layers.sh (and docs/ARCHITECTURE.md)"
        bad=1
        continue
        ;;
    esac
    # one awk over the folder's files (.c then .h): each `#include "folder/..."` of another
    # folder must go to a lower floor
    set --
    for f in "$dir"*.c "$dir"*.h; do
        [ -e "$f" ] && set -- "$@" "$f"
    done
    [ "$#" -gt 0 ] || continue
    awk -v floors="$FLOORS" -v from="$from" '
        BEGIN { n = split(floors, kv, /[ \n]+/); for (i = 1; i <= n; i++) { split(kv[i], p, "="); fl[p[1]] = p[2] } }
        /^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*\// {
            to = $0; sub(/^[^"]*"/, "", to); sub(/\/.*/, "", to)
            if (to == from) next
            if (!(to in fl))
                printf "check-layers: %s:%d includes %s/, which has no floor\n", FILENAME, FNR, to
            else if (fl[to] + 0 >= fl[from] + 0)
                printf "check-layers: %s:%d: %s/ (floor %d) includes %s/ (floor %d); a folder includes only lower floors\n", FILENAME, FNR, from, fl[from], to, fl[to]
        }' "$@"
done >"$out"
if [ -s "$out" ]; then
    cat "$out"
    bad=1
fi
[ "$bad" = 0 ] && echo "check-layers: ok (every include in $SRC/ goes to a lower floor)"
exit "$bad"
