#!/bin/bash
# bench_mpi_hosts.t: one `mpirun pgolab bench` job whose ranks run on two "hosts": two network
# namespaces joined by a veth pair, each with its own hostname (a UTS namespace), the
# PostgreSQL server (`pgolab server start`) in the first. mpirun starts in host A and reaches
# host B the way it would reach another machine: through its rsh launch agent, which here is a
# script that runs the command in B's namespace (`ip netns exec`) instead of ssh; Open MPI's
# daemons and ranks talk over the veth only (oob/btl tcp limited to its subnet).
#
# Addresses: loopback-range only, so nothing here can reach or be reached
# from a real network: the veth ends get 127.77.0.1/24 (A) and 127.77.0.2/24 (B). Linux drops
# 127/8 on a non-loopback interface unless the namespace sets net.ipv4.conf.*.route_localnet=1,
# which the test does in its own namespaces only (the host's settings are never touched).
# The managed server listens on 127.0.0.1 only (by design: private); so that ranks on B can
# reach it, a socat relay in A forwards 127.77.0.1:PORT to it, and every rank (A's too: the
# ranks must get the same options) connects to 127.77.0.1:PORT across the namespaces.
#
# Checks: 4 ranks (2 per host) run; the JSON's ranks name both hosts; the merged counts are
# the sum of the ranks' and the merged histogram that of every sample (mpi_merge_check.pl);
# ranks on B that cannot reach the server (the relay refuses B's address) stop the job, named.
# Everything the test makes (namespaces, veth, server, relay) is removed by the EXIT trap, on
# failure too; every command is bounded by `timeout`.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || bail_out "needs root (network namespaces); CI runs it as root"
have ip || bail_out "needs ip (scripts/install-deps.sh installs iproute2)"
have socat || bail_out "needs socat (scripts/install-deps.sh installs it)"
have unshare || bail_out "needs unshare (util-linux)"
have mpirun || bail_out "needs mpirun (scripts/install-deps.sh installs openmpi-bin and libopenmpi-dev)"
ldd "$PGOLAB" | grep -q libmpi ||
    bail_out "$PGOLAB was built without MPI (install libopenmpi-dev, then make clean pgolab)"
have psql || bail_out "needs psql (scripts/install-deps.sh installs postgresql)"

NSA=pgolab-mpia-$$ NSB=pgolab-mpib-$$
VA=pgmpa$$ VB=pgmpb$$   # interface names: 15 characters at most
ADDR_A=127.77.0.1 ADDR_B=127.77.0.2 NET=127.77.0.0/24
SD=$(mktemp -d /dev/shm/pgolab-mpih.XXXXXX) || bail_out "mktemp in /dev/shm failed"
chmod 0711 "$SD"   # PostgreSQL runs as the postgres user
RELAY=
hosts_cleanup() {
    local ns p
    [ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null
    [ -e "$SD/pg" ] && timeout 60 ip netns exec "$NSA" "$PGOLAB" server stop --datadir="$SD/pg" >/dev/null 2>&1
    for ns in "$NSA" "$NSB"; do
        ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
        ip netns del "$ns"   # takes its end of the veth, and so the pair, with it
    done
    rm -rf "$SD"
    _e2e_cleanup
}
on_exit hosts_cleanup

# "${INA[@]}" CMD...: run CMD in host A's namespace, with A's hostname
INA=(ip netns exec "$NSA" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$NSA")

ip netns add "$NSA" && ip netns add "$NSB" || bail_out "ip netns add failed"
ip link add "$VA" type veth peer name "$VB" || bail_out "ip link add veth failed"
ip link set "$VA" netns "$NSA" && ip link set "$VB" netns "$NSB" || bail_out "moving the veth ends failed"
for x in "$NSA $VA $ADDR_A" "$NSB $VB $ADDR_B"; do
    set -- $x
    ip netns exec "$1" sh -ec "ip link set lo up; sysctl -qw net.ipv4.conf.all.route_localnet=1
        sysctl -qw net.ipv4.conf.$2.route_localnet=1; ip addr add $3/24 dev $2; ip link set $2 up" ||
        bail_out "setting up $1 failed"
done
set --
ok "host B reaches host A over the veth (and not through a loopback)" \
    ip netns exec "$NSB" sh -c "ip route get $ADDR_A | grep -q 'dev $VB'"

# the launch agent: Open MPI calls it as `AGENT HOST COMMAND...` (like ssh); HOST is a namespace
cat >"$TMP/agent" <<'EOF'
#!/bin/sh
ns=$1
shift
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"
EOF
chmod +x "$TMP/agent"

# the server, in A, and the relay that makes it reachable on A's veth address
timeout 120 "${INA[@]}" "$PGOLAB" server start --db-driver=pgsql --datadir="$SD/pg" >"$TMP/start.out" 2>&1 ||
    bail_out "pgolab server start failed: $(tail -3 "$TMP/start.out")"
PORT=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/start.out")
[ -n "$PORT" ] || bail_out "no port in: $(<"$TMP/start.out")"
ip netns exec "$NSA" socat TCP-LISTEN:"$PORT",bind="$ADDR_A",fork,reuseaddr TCP:127.0.0.1:"$PORT" \
    2>"$TMP/relay.err" &
RELAY=$!
for _ in $(seq 1 50); do  # at most 5 s
    ip netns exec "$NSB" timeout 2 socat -u /dev/null TCP:"$ADDR_A:$PORT" 2>/dev/null && break
    sleep 0.1
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# job NAME NP ARGS...: `mpirun -np NP --host A:2,B:2 pgolab bench ARGS` started in host A;
# stdout in $TMP/NAME.out, stderr in $TMP/NAME.err, exit status in $RC, every rank's latencies
# in $TMP/NAME.lat.RANK (on the shared /tmp: the namespaces share the filesystem)
job() {
    local name=$1 np=$2
    shift 2
    PGOLAB_LATENCY_FILE="$TMP/$name.lat" timeout -k 5 60 "${INA[@]}" mpirun --oversubscribe \
        --mca plm_rsh_agent "$TMP/agent" --mca oob_tcp_if_include "$NET" \
        --mca btl_tcp_if_include "$NET" --mca btl self,tcp --host "$NSA:2,$NSB:2" -np "$np" \
        -x PGOLAB_LATENCY_FILE "$PGOLAB" bench "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
PG=(--db-driver=pgsql --pgsql-host="$ADDR_A" --pgsql-port="$PORT" --pgsql-user=sbtest --pgsql-db=sbtest
    --tables=2 --table-size=500)

job prep 4 "${PG[@]}" oltp_read_write prepare
is "$RC" 0 "prepare from host A under 4 ranks on two hosts (exit 0)" || diag "$(tail -5 "$TMP/prep.err")"
is "$(grep -c "^Creating table 'sbtest1'" "$TMP/prep.out")" 1 "prepare ran once (rank 0)"

job run 4 "${PG[@]}" --threads=2 --time=3 --format=json oltp_read_write run
is "$RC" 0 "4 ranks, 2 on each host, run (exit 0)" || diag "$(tail -5 "$TMP/run.err")"
is "$(jq -c '[.ranks[].host]' "$TMP/run.out" 2>&1)" "[\"$NSA\",\"$NSA\",\"$NSB\",\"$NSB\"]" \
    "the JSON's ranks name their hosts: 2 on A, 2 on B"
is "$(perl "$E2E_DIR/mpi_merge_check.pl" "$TMP/run.out" "$TMP/run.lat" 4 2>&1)" ok \
    "counts are the sum of the 4 ranks', the histogram and percentiles those of every sample"
is "$(jq '.threads' "$TMP/run.out" 2>&1)" 8 "threads are the job's (4 ranks x 2)"
cmp_ok "$(jq '[.ranks[] | select(.host == "'"$NSB"'") | .events] | add' "$TMP/run.out" 2>&1)" ">" 0 \
    "the ranks on host B did transactions across the veth"

# host B's ranks cannot reach the server: the relay now accepts connections from A's address
# only (socat's range=), so B's are closed at once while MPI still runs over the same veth
kill "$RELAY" && wait "$RELAY" 2>/dev/null
ip netns exec "$NSA" socat TCP-LISTEN:"$PORT",bind="$ADDR_A",fork,reuseaddr,range="$ADDR_A/32" \
    TCP:127.0.0.1:"$PORT" 2>"$TMP/relay2.err" &
RELAY=$!
for _ in $(seq 1 50); do  # at most 5 s
    ip netns exec "$NSA" timeout 2 socat -u /dev/null TCP:"$ADDR_A:$PORT" 2>/dev/null && break
    sleep 0.1
done
job unreach 4 "${PG[@]}" --threads=2 --time=2 oltp_read_only run
isnt "$RC" 0 "ranks on host B cannot reach the server: the job fails (exit non-zero)"
like "$(<"$TMP/unreach.err")" "cannot connect to PostgreSQL server at $ADDR_A:$PORT: server closed the connection" \
    "with B's ranks' message"
like "$(<"$TMP/unreach.err")" "rank 2 of 4 could not reach the server" "rank 0 names the first of B's ranks"
unlike "$(<"$TMP/unreach.out")" "Threads started" "no rank started, A's neither"

done_testing
