#!/usr/bin/env bash
# cluster_fanout.sh: one seat's fan-out on 1 node × 3N subscribers vs 3 nodes × N (issue 15, --redis).
#
# Usage: bench/cluster_fanout.sh [SLUICE_BINARY] [MESSAGES=3000] [SUBSCRIBERS_PER_NODE=1000]
# Env SINGLE: the one node's subscribers (default 3N, the same total; SINGLE=N compares a node
# of N against three of N each, issue 31's 1 x 10,000 vs 3 x 10,000); TIMEOUT: each side's
# bound in seconds (default 60). Each node's subscribers are one client process (a process
# may hold 20,000 descriptors here).
#   1. one `sluice serve` (no Redis), SINGLE SSE subscribers on one seat (bench/fanout_client.cpp), one
#      prompt "N=MESSAGES" to bench/fanout_agent.py: MESSAGES ~1 KiB frames.
#   2. a private redis-server (unix socket, no persistence) and three `sluice serve --redis`; the seat
#      on node A, N subscribers on each node (B and C serve it from the Redis stream); same prompt.
# Reported per run: delivered messages/s (first to last receive), CPU µs per delivered message of
# the sluice processes (utime+stime from /proc) and of redis-server, lost/dup per subscriber, and
# redis-server's used_memory and the seat's stream length and memory (MEMORY USAGE) at the end.
# Bounded: each side stops after 60 s; everything started is killed on exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SLUICE=${1:-$HERE/../build/release/apps/sluice/sluice}
MSGS=${2:-3000}
SUBS=${3:-1000}
TIMEOUT=${TIMEOUT:-60}
SINGLE=${SINGLE:-$((3 * SUBS))}

WORK=$(mktemp -d /tmp/cluster-fanout-XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    sleep 0.5
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n 16384

g++ -std=c++20 -O2 -pthread "$HERE/fanout_client.cpp" "$HERE/fanout_conn.cpp" -o "$WORK/fanout_client"
CLIENT=$WORK/fanout_client
TCK=$(getconf CLK_TCK)

cpu_ticks() {
    local total=0 p
    for p in "$@"; do
        total=$((total + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

wait_ready() {
    for _ in $(seq 1 600); do
        grep -q '^READY' "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "subscribers never became ready: $1" >&2
    cat "$1" >&2
    return 1
}

start_node() {  # start_node NAME [extra args…]; sets PORT PID
    local name=$1
    shift
    mkdir -p "$WORK/$name"
    "$SLUICE" serve --listen 127.0.0.1:0 --data "$WORK/$name" --threads 2 --no-token \
        --agent-cmd "python3 $HERE/fanout_agent.py" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PID=$!
    PIDS+=("$PID")
    for _ in $(seq 1 100); do
        grep -q 'listening on' "$WORK/$name.out" && break
        sleep 0.1
    done
    PORT=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$WORK/$name.out" | grep -o '[0-9]*$')
}

new_seat() {
    curl -s -X POST -H 'Content-Type: application/json' -d '{"agent":"process"}' \
        "http://127.0.0.1:$1/v1/seats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seat"])'
}

sum_received() {
    local total=0 f
    for f in "$@"; do
        total=$((total + $(grep '^subscribers=' "$f" | sed 's/.* received=\([0-9]*\).*/\1/')))
    done
    echo "$total"
}

echo "# cluster fan-out: $MSGS messages of 1 KiB; 1 node x $SINGLE vs 3 nodes x $SUBS subscribers"
echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. one node -------------------------------------------------------------------------
start_node single
SEAT=$(new_seat "$PORT")
"$CLIENT" sub "$PORT" "/v1/seats/$SEAT/events" "$SINGLE" "$MSGS" "$TIMEOUT" 1 >"$WORK/sub-single.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-single.out"
sleep 0.5
T0=$(cpu_ticks "$PID")
curl -s -X POST -H 'Content-Type: application/json' -d "{\"text\":\"N=$MSGS\"}" \
    "http://127.0.0.1:$PORT/v1/seats/$SEAT/messages" >/dev/null
wait "$SUBPID" || true
T1=$(cpu_ticks "$PID")
R=$(sum_received "$WORK/sub-single.out")
echo "1 node: $(grep '^subscribers=' "$WORK/sub-single.out")"
awk -v t=$((T1 - T0)) -v k="$TCK" -v r="$R" \
    'BEGIN{printf "1 node: sluice_cpu_s=%.2f cpu_us_per_delivered=%.3f\n", t/k, r ? t/k/r*1e6 : -1}'
kill "$PID" 2>/dev/null || true

# ---- 2. three nodes on one Redis -----------------------------------------------------------
redis-server --port 0 --unixsocket "$WORK/redis.sock" --save "" --appendonly no \
    --dir "$WORK" --logfile "$WORK/redis.log" &
RPID=$!
PIDS+=("$RPID")
for _ in $(seq 1 100); do
    redis-cli -s "$WORK/redis.sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done
NODES=() NPIDS=()
for n in a b c; do
    start_node "node-$n" --redis "unix://$WORK/redis.sock"
    NODES+=("$PORT")
    NPIDS+=("$PID")
done
SEAT=$(new_seat "${NODES[0]}")
for port in "${NODES[@]:1}"; do # the registry reaches B and C within a tick
    for _ in $(seq 1 50); do
        curl -s "http://127.0.0.1:$port/v1/seats" | grep -q "$SEAT" && break
        sleep 0.1
    done
done
SUBPIDS=()
for i in 0 1 2; do
    "$CLIENT" sub "${NODES[$i]}" "/v1/seats/$SEAT/events" "$SUBS" "$MSGS" "$TIMEOUT" 1 \
        >"$WORK/sub-$i.out" 2>&1 &
    SUBPIDS+=("$!")
    PIDS+=("$!")
done
for i in 0 1 2; do wait_ready "$WORK/sub-$i.out"; done
sleep 0.5
T0=$(cpu_ticks "${NPIDS[@]}")
RT0=$(cpu_ticks "$RPID")
curl -s -X POST -H 'Content-Type: application/json' -d "{\"text\":\"N=$MSGS\"}" \
    "http://127.0.0.1:${NODES[0]}/v1/seats/$SEAT/messages" >/dev/null
for p in "${SUBPIDS[@]}"; do wait "$p" || true; done
T1=$(cpu_ticks "${NPIDS[@]}")
RT1=$(cpu_ticks "$RPID")
R=$(sum_received "$WORK"/sub-[012].out)
for i in 0 1 2; do echo "3 nodes, node $i: $(grep '^subscribers=' "$WORK/sub-$i.out")"; done
awk -v t=$((T1 - T0)) -v rt=$((RT1 - RT0)) -v k="$TCK" -v r="$R" \
    'BEGIN{printf "3 nodes: delivered=%d sluice_cpu_s=%.2f cpu_us_per_delivered=%.3f redis_cpu_s=%.2f redis_cpu_us_per_frame_delivered=%.3f\n", r, t/k, r ? t/k/r*1e6 : -1, rt/k, r ? rt/k/r*1e6 : -1}'
echo "3 nodes: redis used_memory=$(redis-cli -s "$WORK/redis.sock" info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r') bytes," \
    "stream entries=$(redis-cli -s "$WORK/redis.sock" xlen "sluice:seat:$SEAT:s")," \
    "stream memory=$(redis-cli -s "$WORK/redis.sock" memory usage "sluice:seat:$SEAT:s" samples 0) bytes," \
    "window bytes on A=$(curl -s "http://127.0.0.1:${NODES[0]}/v1/seats/$SEAT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["window"]["bytes"])')"
