#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_reasons.t: every rebuild and retrain says why, in one line naming the cause, on the
# stand-in (tests/standin, the real mariadbd as its child) and the real recipes/mariadb.json:
# the same command twice rebuilds and retrains nothing and says nothing; changing only the
# trainer rebuilds only the pgo build, for that reason (not "the recipe's build steps
# changed"); an edited, an added and a removed source file are named with their count;
# --train-time names the old and new value; --rebuild is named; a removed profile is named.
# A training stopped by Ctrl-C, and one whose benchmark client is killed, name the profile
# that was lost and how to continue, and leave nothing of it (no profile directory, no
# stamp, an empty raw directory), so nothing half-written is ever merged; the same command
# then trains it again.
. "$(dirname "$0")/lib.sh"
have setsid || bail_out "setsid (util-linux) not found"

BGPID=
cleanup() {
    [ -n "$BGPID" ] && kill -KILL -- "-$BGPID" 2>/dev/null
    _e2e_cleanup
}
on_exit cleanup

standin_setup # SRC, RECIPES; derive, pgo, errors_of: lib.sh
derive mariadb standin-why
WD=$TMP/wd
RUN=(standin-why --source="$SRC" --workdir="$WD" --train-time=2 --table-size=1000 --measure=off)
# reasons FILE: the lines of a run's stderr that say why something is done again
reasons() { grep -E '^(rebuilding|retraining) ' "$1"; }

note "---- the first run, then the same command: nothing rebuilt, nothing said"
pgo first "${RUN[@]}" --train=oltp_point_select
is "$RC" 0 "first run: exit 0" || diag "$(tail -20 "$TMP/first.err")"
ROOT=$(ls -d "$WD"/standin-why-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
is "$(reasons "$TMP/first.err" | wc -l)" 0 "first run: no rebuild or retrain line (nothing was built before)"
ok "a build keeps the source's file list beside its stamp" grep -q '  standin.c$' "$ROOT/baseline/source-files"
pgo same "${RUN[@]}" --train=oltp_point_select
is "$RC" 0 "same command: exit 0"
is "$(reasons "$TMP/same.err" | wc -l)" 0 "same command: no rebuild or retrain line"
is "$(grep -c '(cached)$' "$TMP/same.out")" 4 "same command: baseline, instrumented, training and pgo cached"

note "---- only the trainer changes: only pgo is rebuilt, because of the trainer"
pgo trainer "${RUN[@]}" --train=oltp_read_only
is "$RC" 0 "another trainer: exit 0" || diag "$(tail -20 "$TMP/trainer.err")"
is "$(reasons "$TMP/trainer.err")" \
    'rebuilding pgo: the trainer changed since the cached build (was "oltp_point_select", now "oltp_read_only")' \
    "another trainer: one line, the pgo build's, naming both trainers"
unlike "$(cat "$TMP/trainer.err")" "build steps changed" "another trainer: not blamed on the recipe's steps"
like "$(grep '^  baseline' "$TMP/trainer.out")" "\(cached\)$" "another trainer: baseline cached"
like "$(grep '^  instrumented' "$TMP/trainer.out")" "\(cached\)$" "another trainer: instrumented cached"

note "---- source files edited, added and removed: named, and counted"
echo "/* edited by pgo_reasons.t */" >>"$SRC/standin.c"
echo "added by pgo_reasons.t" >"$SRC/NOTES.txt"
pgo edit "${RUN[@]}" --train=oltp_read_only
is "$RC" 0 "edited source: exit 0" || diag "$(tail -20 "$TMP/edit.err")"
for v in baseline instrumented; do
    like "$(reasons "$TMP/edit.err")" "^rebuilding $v: the source tree changed since the cached build: 2 files changed \(edited: standin.c; added: NOTES.txt\)$" \
        "edited source: $v rebuilt, the two files named and counted"
done
like "$(reasons "$TMP/edit.err")" "^retraining oltp_read_only: its profile is from another instrumented build since the last training \(was \"[0-9a-f]{64}\", now \"[0-9a-f]{64}\"\)$" \
    "edited source: retrained, because the instrumented build changed"
like "$(reasons "$TMP/edit.err")" "^rebuilding pgo: the source tree changed since the cached build: 2 files changed" \
    "edited source: pgo rebuilt, the files named"
rm "$SRC/NOTES.txt"
pgo removed "${RUN[@]}" --train=oltp_read_only
like "$(reasons "$TMP/removed.err" | head -1)" "^rebuilding baseline: the source tree changed since the cached build: 1 file changed \(removed: NOTES.txt\)$" \
    "removed file: named"

note "---- the compiler, the PGO flags, a stamp from an older pgolab (each stamp edited as that change would leave it)"
CC_NOW=$(sed -n 's/^compiler: //p' "$ROOT/baseline/stamp")
sed -i 's/^compiler: .*/compiler: gcc (Debian 11.3.0-1) 11.3.0/' "$ROOT/baseline/stamp"
sed -i 's/^phase-flags: .*/phase-flags: -fprofile-use=old/' "$ROOT/pgo/stamp"
# the instrumented build's stamp as the pgolab before stamp format 2 wrote it: the same inputs
sed -i '/^stamp: 2$/d' "$ROOT/instrumented/stamp"
pgo flags "${RUN[@]}" --train=oltp_read_only
is "$RC" 0 "changed stamps: exit 0" || diag "$(tail -20 "$TMP/flags.err")"
like "$(reasons "$TMP/flags.err")" "^rebuilding baseline: the compiler changed since the cached build \(was \"gcc \(Debian 11\.3\.0-1\) 11\.3\.0\", now \"$(printf '%s' "$CC_NOW" | sed 's/[][\.*^$+?(){}|/]/\\&/g')\"\)$" \
    "compiler: both versions named"
unlike "$(reasons "$TMP/flags.err")" "^rebuilding instrumented" \
    "a stamp of an older pgolab with the same inputs: the build is kept, not rebuilt"
is "$(head -1 "$ROOT/instrumented/stamp")" "stamp: 2" "... and its stamp rewritten as this pgolab's"
sed -i '/^stamp: 2$/d; s/^cflags: .*/cflags: -O3/' "$ROOT/instrumented/stamp"
pgo older "${RUN[@]}" --train=oltp_read_only
like "$(reasons "$TMP/older.err")" "^rebuilding instrumented: the cached build was made by an older pgolab, whose stamp does not name every input this one checks$" \
    "a stamp of an older pgolab with other inputs: said so"
like "$(reasons "$TMP/flags.err")" "^rebuilding pgo: (the PGO flags changed since the cached build \(was \"-fprofile-use=old\", now \"|its profile changed)" \
    "pgo: the flags named (or, retrained after the instrumented rebuild, its profile)"

note "---- a training setting, a removed profile, --rebuild"
pgo ttime "${RUN[@]}" --train=oltp_read_only --train-time=3
is "$RC" 0 "--train-time: exit 0"
like "$(reasons "$TMP/ttime.err")" '^retraining oltp_read_only: --train-time changed since the last training \(was "2", now "3"\)$' \
    "--train-time: the retrain names the old and the new value"
PROF=$ROOT/profile-oltp_read_only
rm -rf "$PROF"
pgo noprof "${RUN[@]}" --train=oltp_read_only --train-time=3
like "$(reasons "$TMP/noprof.err")" "^retraining oltp_read_only: its profile $PROF was removed$" "removed profile: named"
pgo rebuild "${RUN[@]}" --train=oltp_read_only --train-time=3 --rebuild
is "$RC" 0 "--rebuild: exit 0"
for v in baseline instrumented pgo; do
    like "$(reasons "$TMP/rebuild.err")" "^rebuilding $v: --rebuild was given$" "--rebuild: $v says so"
done
like "$(reasons "$TMP/rebuild.err")" "^retraining oltp_read_only: --rebuild was given$" "--rebuild: the training says so"

# train_bg NAME ARGS...: the pipeline in the background, leading its own process group; returns
# once the training's benchmark client runs (its pid in CLIENT)
train_bg() {
    local name=$1
    shift
    setsid "$PGOLAB" pgo "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    BGPID=$!
    CLIENT=
    for _ in $(seq 1200); do
        CLIENT=$(ps -o pid=,args= -g "$BGPID" 2>/dev/null | awk '/ bench .* oltp_read_only run/ { print $1; exit }')
        [ -n "$CLIENT" ] && break
        sleep 0.1
    done
}
lost_nothing() { # WHAT: the trainer's profile left nothing behind
    ok "$1: no profile directory" test ! -e "$PROF"
    ok "$1: no training stamp" test ! -e "$PROF.stamp"
    is "$(ls -A "$ROOT/profile-raw" 2>/dev/null | wc -l)" 0 "$1: the raw profile directory is empty"
}

note "---- Ctrl-C during the training"
train_bg int "${RUN[@]}" --train=oltp_read_only --train-time=20
ok "interrupt: the training's client runs" test -n "$CLIENT"
sleep 1
kill -INT -- "-$BGPID"
wait "$BGPID"
is "$?" 2 "interrupt: exit 2"
BGPID=
like "$(cat "$TMP/int.err")" "training oltp_read_only interrupted: its profile $PROF is lost \(the partial data was discarded, nothing merged from it\); the same command trains it again" \
    "interrupt: the lost profile named, and how to continue"
lost_nothing "interrupt"

note "---- the training's benchmark client killed"
train_bg kill "${RUN[@]}" --train=oltp_read_only --train-time=20
ok "killed client: the training's client runs" test -n "$CLIENT"
sleep 1
kill -KILL "$CLIENT"
wait "$BGPID"
is "$?" 1 "killed client: exit 1"
BGPID=
like "$(cat "$TMP/kill.err")" "training oltp_read_only failed: its profile $PROF is lost \(the partial data was discarded, nothing merged from it\); the same command trains it again once the cause above is fixed" \
    "killed client: the lost profile named, and how to continue"
lost_nothing "killed client"

pgo again "${RUN[@]}" --train=oltp_read_only --train-time=2
is "$RC" 0 "the same command afterwards: exit 0" || diag "$(tail -20 "$TMP/again.err")"
unlike "$(grep '^  training' "$TMP/again.out")" "\(cached\)" "the same command afterwards: trained again"
ok "the same command afterwards: the profile is there" test -e "$PROF.stamp"

ok "no stand-in server of this test left running" test -z "$(pgrep -f -- "^$WD/")"
done_testing
