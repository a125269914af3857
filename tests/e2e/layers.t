#!/usr/bin/env bash
# layers.t: scripts/check-layers.sh (run by `make check`) passes on src/ and fails, naming the
# file, the line and both floors, when a lower folder includes a higher one, when a folder
# crosses to a sibling on its floor (report/ and experiment/, both above model/, too), and when
# a new folder has no floor.
. "$(dirname "$0")/lib.sh"
on_exit _e2e_cleanup

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
printf '#include "experiment/run.h"\n' >>"$TMP/src/report/tables.c"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "the reports include the engine: exit 1"
like "$out" "report/ \(floor 5\) includes experiment/ \(floor 5\)" \
    "the reports and the engine are siblings above model/: named"

cp -a "$REPO_DIR/src/." "$TMP/src/"
printf '#include "experiment/record.h"\n' >>"$TMP/src/model/machine.c"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "the model includes the engine: exit 1"
like "$out" "model/ \(floor 4\) includes experiment/ \(floor 5\)" "the model includes the engine: named"

cp -a "$REPO_DIR/src/." "$TMP/src/"
mkdir -p "$TMP/src/newthing"
printf 'int x;\n' >"$TMP/src/newthing/x.c"
out=$(sh "$CHECK" "$TMP/src" 2>&1)
is "$?" 1 "a folder without a floor: exit 1"
like "$out" "newthing/ has no floor" "a folder without a floor: named"
done_testing
