#!/usr/bin/env bash
# source_fetch.t: `pgolab pgo TARGET --fetch` fetches a recipe's Debian source package through
# pgolab's own apt configuration (src/pgo/apt.c: a directory of its own, PGOLAB_APT_DIR here)
# and never through the system's: /etc/apt is byte for byte the same afterwards, and the
# configuration holds deb-src entries only. A package the system's release (Debian 12) carries
# comes from it (sqlite3, as the sqlite recipe has always used); a package only newer suites
# carry (haskell-primitive-addr, a few kB: trixie and sid, in other versions) comes from the first that does, or from the
# recipe's "suite"; the suite and the exact version are printed and kept beside the tree. A
# tree fetched before is reused with no apt at all (offline). Bad input and faults, one line
# and exit 1 each: a package no suite carries, one missing from the recipe's suite, "suite"
# without "debian" (FILE:LINE), and, in a network namespace of its own (as root), no network
# with no lists (naming the suites and the command) and no network with old lists (a warning,
# then the package, the suite and the command that would fetch it).
. "$(dirname "$0")/lib.sh"

have jq || bail_out "jq missing (make deps installs it)"
have dpkg-source || bail_out "dpkg-source missing (make deps installs dpkg-dev)"
export PGOLAB_APT_DIR=$TMP/apt
RECIPES=$TMP/recipes
mkdir -p "$RECIPES"

# fetch NAME TARGET [ARGS...]: `pgolab pgo TARGET --fetch ARGS`, $TMP/NAME.out/.err, $RC
fetch() {
    local name=$1
    shift
    timeout -k 5 300 "$PGOLAB" pgo "$@" --fetch >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
# recipe NAME PKG [SUITE]: a recipe whose source is Debian's PKG (any tree with debian/control)
recipe() {
    jq -n --arg n "$1" --arg p "$2" --arg s "${3:-}" '{pgolab_recipe: 1, name: $n,
        source: ({debian: $p, expect: ["debian/control"]} + (if $s == "" then {} else {suite: $s} end)),
        server: {driver: "mysql", binary: "bin/mysqld"},
        steps: [{name: "build", run: ["true"]}]}' >"$RECIPES/$1.json"
}
etc_sum() { find /etc/apt -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum; }
ETC_BEFORE=$(etc_sum)

note "---- the system's release: sqlite3 from Debian 12"
fetch sq sqlite --workdir="$TMP/wd"
is "$RC" 0 "sqlite --fetch: exit 0"
SQ_TREE=$(sed -n 's/^source: *//p' "$TMP/sq.out")
like "$SQ_TREE" "^$TMP/wd/src/sqlite3-3\.[0-9.]+$" "the tree is in WORKDIR/src"
like "$(<"$TMP/sq.out")" '^package: sqlite3 3\.[0-9.]+-[^ ]+ \(Debian bookworm(-updates|-security)?\)$' \
    "the package line names the exact version and the Debian 12 suite"
ok "the tree is SQLite's" test -f "$SQ_TREE/sqlite3.1" -o -f "$SQ_TREE/src/sqlite.h.in"
SRC_FILE=$(<"$PGOLAB_APT_DIR/sources.list.d/pgolab.sources")
like "$SRC_FILE" '^Types: deb-src$' "pgolab's sources name deb-src entries"
unlike "$SRC_FILE" '^Types:.*\<deb\>( |$)' "and no binary (deb) entries"
like "$SRC_FILE" '^Suites: .*sid' "sid is among the suites"
is "$(etc_sum)" "$ETC_BEFORE" "/etc/apt is unchanged"

note "---- a package only newer suites carry"
recipe eat haskell-primitive-addr
fetch eat "$RECIPES/eat.json" --workdir="$TMP/wd2"
is "$RC" 0 "haskell-primitive-addr --fetch: exit 0"
like "$(<"$TMP/eat.out")" '^package: haskell-primitive-addr [^ ]+ \(Debian trixie\)$' \
    "it comes from the first newer suite that carries it (trixie)"
VER=$(sed -n 's/^package: haskell-primitive-addr \([^ ]*\) .*/\1/p' "$TMP/eat.out")
ok "the suite is kept beside the tree" grep -qx trixie "$TMP/wd2/src/haskell-primitive-addr_$VER.pgolab-suite"
ok "the .dsc of that version is there" test -f "$TMP/wd2/src/haskell-primitive-addr_$VER.dsc"
recipe eatsid haskell-primitive-addr sid
fetch eatsid "$RECIPES/eatsid.json" --workdir="$TMP/wd3"
is "$RC" 0 "the recipe's suite: exit 0"
like "$(<"$TMP/eatsid.out")" '^package: haskell-primitive-addr [^ ]+ \(Debian sid\)$' "it comes from the recipe's suite (sid)"

note "---- a cached tree needs no apt (offline)"
PGOLAB_APT_DIR=/proc/no-such-dir fetch again "$RECIPES/eat.json" --workdir="$TMP/wd2"
is "$RC" 0 "fetch again with an unusable apt directory: exit 0"
like "$(<"$TMP/again.out")" '^package: haskell-primitive-addr [^ ]+ \(Debian trixie\)$' "the same tree, its suite kept"

note "---- --db-version: the major's version from a suite that carries it; a major none carries"
# versions: 0.1 (trixie and sid carry 0.1.0.x) and 9.9 (no suite carries it)
jq '. + {versions: {default: "0.1", majors: {"9.9": {}, "0.1": {}}}}' "$RECIPES/eat.json" >"$RECIPES/eatv.json"
fetch dv "$RECIPES/eatv.json" --workdir="$TMP/wd9" --db-version=0.1
is "$RC" 0 "--db-version=0.1: exit 0" || diag "$(<"$TMP/dv.err")"
like "$(<"$TMP/dv.out")" '^package: haskell-primitive-addr 0\.1\.[^ ]+ \(Debian (trixie|sid)\)$' "--db-version=0.1: a 0.1 version, and its suite"
fetch dv99 "$RECIPES/eatv.json" --workdir="$TMP/wd9" --db-version=9.9
is "$RC" 1 "--db-version=9.9: exit 1"
is "$(<"$TMP/dv99.err")" "FATAL: --db-version=9.9: no Debian suite pgolab looks in ($(sed -n 's/^Suites: //p' "$PGOLAB_APT_DIR/sources.list.d/pgolab.sources" | tr '\n' ' ' | sed 's/ $//; s/ /, /g')) carries haskell-primitive-addr 9.9; the majors of the recipe they carry: 0.1 (or pass --source=DIR|TARBALL)" \
    "--db-version=9.9: one line listing the majors that exist"
fetch dv5 "$RECIPES/eatv.json" --workdir="$TMP/wd9" --db-version=5
is "$(<"$TMP/dv5.err")" "FATAL: --db-version=5: the eat recipe builds the major versions 0.1, 9.9" \
    "--db-version=5: one line listing the recipe's majors (sorted)"
fetch dvsq sqlite --workdir="$TMP/wd9" --db-version=3
is "$(<"$TMP/dvsq.err")" 'FATAL: --db-version=3: the sqlite recipe builds one version only (it has no "versions")' \
    "--db-version for a recipe without versions: one line"

note "---- official in --variants: exactly the installed package's revision"
# jq: a small source package whose binary is installed; as an official binary its revision is
# what --fetch asks apt for, whether the archive still lists it (fetched into its own
# directory) or not (one line: the version, "do not list it", the command)
jq -n '{pgolab_recipe: 1, name: "jqoff", source: {debian: "jq", expect: ["debian/control"]},
        server: {driver: "mysql", binary: "bin/jq", official: {binary: "/usr/bin/jq"}},
        steps: [{name: "build", run: ["true"]}]}' >"$RECIPES/jqoff.json"
JQV=$(dpkg-query -W -f='${Version}' jq)
fetch jqoff "$RECIPES/jqoff.json" --workdir="$TMP/wd10" --variants=baseline,official
if [ -s "$TMP/wd10/src/jq_$JQV/apt-get-source.log" ] && [ "$RC" = 0 ]; then
    like "$(<"$TMP/jqoff.out")" "^package: jq $(printf '%s' "$JQV" | sed 's/[.+]/\\&/g') " "official: the installed revision $JQV fetched"
    like "$(<"$TMP/jqoff.out")" "^source: +$TMP/wd10/src/jq_$(printf '%s' "$JQV" | sed 's/[.+]/\\&/g')/jq-" "... into its own directory"
else
    is "$RC" 1 "official: the installed revision $JQV, no longer in the archive: exit 1"
    like "$(<"$TMP/jqoff.err")" "^FATAL: cannot fetch the source package jq at exactly $(printf '%s' "$JQV" | sed 's/[.+]/\\&/g') .*do not list it; in $TMP/wd10/src/jq_.* run \`apt-get .* source jq=" \
        "... one line: the exact version, that the suites do not list it, the command"
fi

note "---- bad input"
recipe nope pgolab-no-such-source-package
fetch nope "$RECIPES/nope.json" --workdir="$TMP/wd4"
is "$RC" 1 "a package no suite carries: exit 1"
is "$(wc -l <"$TMP/nope.err")" 1 "one line"
like "$(<"$TMP/nope.err")" 'no Debian suite pgolab looks in carries the source package pgolab-no-such-source-package \(bookworm, .*sid' \
    "it names the package and the suites"
recipe bw haskell-primitive-addr bookworm
fetch bw "$RECIPES/bw.json" --workdir="$TMP/wd5"
is "$RC" 1 "a package missing from the recipe's suite: exit 1"
like "$(<"$TMP/bw.err")" "the bw recipe's source package haskell-primitive-addr is not in Debian's bookworm suite" \
    "it names the recipe, the package and the suite"
jq '.source.debian = null | del(.source.debian)' "$RECIPES/eatsid.json" >"$RECIPES/nodeb.json"
fetch nodeb "$RECIPES/nodeb.json" --workdir="$TMP/wd6"
is "$RC" 1 "suite without debian: exit 1"
like "$(<"$TMP/nodeb.err")" "nodeb.json:[0-9]+: 'suite' names where the 'debian' source package comes from" \
    "FILE:LINE names the key"

note "---- no network"
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
    PGOLAB_APT_DIR=$TMP/apt-offline unshare -n timeout -k 5 120 "$PGOLAB" pgo "$RECIPES/eat.json" \
        --fetch --workdir="$TMP/wd7" >"$TMP/off.out" 2>"$TMP/off.err"
    is "$?" 1 "offline without lists: exit 1"
    is "$(grep -c . "$TMP/off.err")" 1 "one line"
    like "$(<"$TMP/off.err")" "cannot read the Debian archive's source lists \(bookworm, .*sid\).*apt-get .*Dir::Etc::sourceparts=$TMP/apt-offline/sources.list.d.* update" \
        "it names the suites and the command"
    touch -d '2 days ago' "$PGOLAB_APT_DIR/updated"
    unshare -n timeout -k 5 120 "$PGOLAB" pgo "$RECIPES/eatsid.json" --fetch --workdir="$TMP/wd8" \
        >"$TMP/off2.out" 2>"$TMP/off2.err"
    is "$?" 1 "offline with old lists: exit 1"
    like "$(<"$TMP/off2.err")" "could not refresh pgolab's apt lists .*using those of [0-9]+ hours ago" \
        "a warning says the lists are old"
    like "$(<"$TMP/off2.err")" "cannot fetch the source package haskell-primitive-addr \(tried [^ ]+ in sid; apt: .*run \`apt-get .* source haskell-primitive-addr=" \
        "then one line names the package, the suite and the command"
    is "$(grep -vcE '^(WARNING|source): ' "$TMP/off2.err")" 1 "and nothing else" || diag "$(<"$TMP/off2.err")"
else
    skip 7 "needs root and unshare -n (a network namespace); CI runs as root"
fi
is "$(etc_sum)" "$ETC_BEFORE" "/etc/apt is still unchanged"

done_testing
