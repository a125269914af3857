#!/usr/bin/env bash
# layers.t: scripts/check-layers.sh (run by `make check`) passes on src/ and fails, naming the
# file, the line and both floors, when a lower folder includes a higher one, when a folder
# crosses to a sibling on its floor, and when a new folder has no floor.
. "$(dirname "$0")/lib.sh"
trap _e2e_cleanup EXIT

CHECK=$REPO_DIR/scripts/check-layers.sh
out=$(sh "$CHECK" "$REPO_DIR/src" 2>&1)
is "$?" 0 "src/: every include goes to a lower floor" || diag "$out"

cp -a "$REPO_DIR/src" "$TMP/src"
printf '#include "pgo/pipeline.h"\n' >>"$TMP/src/db/driver.h"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "a climbing include: exit 1"
like "$out" "^check-layers: $TMP/src/db/driver.h:[0-9]+: db/ \(floor 1\) includes pgo/ \(floor 6\)" \
    "a climbing include: names the file, the line and both floors"

cp -a "$REPO_DIR/src/." "$TMP/src/"
printf '#include "server/server.h"\n' >>"$TMP/src/db/driver.h"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "a sibling on the same floor: exit 1"
like "$out" "db/ \(floor 1\) includes server/ \(floor 1\)" "a sibling on the same floor: named"

cp -a "$REPO_DIR/src/." "$TMP/src/"
mkdir -p "$TMP/src/newthing"
printf 'int x;\n' >"$TMP/src/newthing/x.c"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "a folder without a floor: exit 1"
like "$out" "newthing/ has no floor" "a folder without a floor: named"
done_testing
