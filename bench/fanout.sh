#!/usr/bin/env bash
# fanout.sh: hub fan-out side by side with nginx + nchan (issue 5, Performance), plus sluice latency.
#
# Usage: bench/fanout.sh [SLUICE_BINARY] [MESSAGES=5000] [SUBSCRIBERS=1000] [CLIENT_THREADS=1] [NCHAN_WORKERS=1]
#   1. sluice: `sluice serve` on 127.0.0.1:0 with bench/fanout_agent.py as its process agent; SUBSCRIBERS
#      SSE subscribers on one seat; one prompt "N=MESSAGES" makes the agent write MESSAGES ~1 KiB
#      assistant rows as fast as the hub reads its stdout (one frame each).
#   2. nginx + nchan: own nginx (config from bench/nchan.conf.in, temp prefix, daemon off) on a free
#      loopback port; SUBSCRIBERS EventSource subscribers on one channel; MESSAGES 1 KiB POSTs from one
#      keep-alive connection pipelined 32 deep.
#   3. sluice latency: LAT_SUBS subscribers (default 100), LAT_FRAMES frames (500) paced at
#      LAT_RATE per second (50), publish-to-receive p50/p99/max, the measuring client's own CPU.
#   4. nginx + nchan latency: the same paced load, published one POST at a time at LAT_RATE.
#   5. floor latency (step "floor-latency", not in the default STEPS): the same paced load from
#      bench/fanout_floor.cpp, a server that only writes each event to every socket from
#      FLOOR_THREADS threads (default 2, as `sluice serve --threads 2`): this machine's floor.
# Env STEPS: which steps run (default "rate nchan latency nchan-latency"); LAT_THREADS: client
# threads of the latency steps (default 1).
# Env SLUICE_ARGS: extra `sluice serve` options (e.g. "--window-cap 8000"); TIMEOUT: the bound
# of each side in seconds (default 60).
# Reported: delivered messages/s across subscribers (first to last receive), server CPU seconds
# (utime+stime from /proc, all server processes) per delivered message, and loss/duplicates per
# subscriber. Bounded: each side stops after TIMEOUT s; everything started is killed on exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SLUICE=${1:-$HERE/../build/bench/apps/sluice/sluice}
MSGS=${2:-5000}
SUBS=${3:-1000}
CTHREADS=${4:-1}
WORKERS=${5:-1}
TIMEOUT=${TIMEOUT:-60}

WORK=$(mktemp -d /tmp/fanout-XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for _ in $(seq 1 30); do
        local alive=0 p
        for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n 16384

g++ -std=c++20 -O2 -pthread "$HERE/fanout_client.cpp" "$HERE/fanout_conn.cpp" -o "$WORK/fanout_client"
g++ -std=c++20 -O2 -pthread "$HERE/fanout_floor.cpp" "$HERE/fanout_conn.cpp" -o "$WORK/fanout_floor"
CLIENT=$WORK/fanout_client
TCK=$(getconf CLK_TCK)

# cpu_ticks PID...: utime+stime of the processes in clock ticks.
cpu_ticks() {
    local total=0 p
    for p in "$@"; do
        # fields after the ")" of comm: state is $1, utime $12, stime $13
        total=$((total + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_line FILE PATTERN: wait (10 s at most) for a line of FILE matching PATTERN (grep -E).
wait_line() {
    for _ in $(seq 1 100); do
        grep -qE "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# wait_ready FILE: wait for the subscriber client's READY line.
wait_ready() {
    for _ in $(seq 1 600); do
        grep -q '^READY' "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "subscribers never became ready" >&2
    cat "$1" >&2
    return 1
}

report() {  # report NAME SUB_OUT TICKS_DELTA
    local line received cpu
    line=$(grep '^subscribers=' "$2")
    received=$(echo "$line" | sed 's/.* received=\([0-9]*\).*/\1/')
    cpu=$(awk -v t="$3" -v k="$TCK" 'BEGIN{printf "%.2f", t/k}')
    echo "$1: $line"
    awk -v n="$1" -v t="$3" -v k="$TCK" -v r="$received" \
        'BEGIN{printf "%s: server_cpu_s=%.2f cpu_us_per_delivered=%.3f\n", n, t/k, r ? t/k/r*1e6 : -1}'
}

start_sluice() {  # sets SPORT SPID
    local d=$WORK/sluice-data-$1
    mkdir -p "$d"
    # shellcheck disable=SC2086
    "$SLUICE" serve --listen 127.0.0.1:0 --data "$d" --threads 2 --no-token ${SLUICE_ARGS:-} \
        --agent-cmd "python3 $HERE/fanout_agent.py" >"$WORK/sluice-$1.out" 2>"$WORK/sluice-$1.err" &
    SPID=$!
    PIDS+=("$SPID")
    wait_line "$WORK/sluice-$1.out" 'listening on' || true
    SPORT=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$WORK/sluice-$1.out" | grep -o '[0-9]*$')
}

new_seat() {
    curl -s -X POST -H 'Content-Type: application/json' -d '{"agent":"process"}' \
        "http://127.0.0.1:$SPORT/v1/seats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seat"])'
}

echo "# fan-out: $SUBS subscribers, $MSGS messages of 1 KiB, client threads $CTHREADS, nchan workers $WORKERS, sluice args: ${SLUICE_ARGS:-none}"
echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load: $(cut -d' ' -f1-3 /proc/loadavg)"

LAT_SUBS=${LAT_SUBS:-100}
LAT_RATE=${LAT_RATE:-50}
LAT_FRAMES=${LAT_FRAMES:-500}
LAT_THREADS=${LAT_THREADS:-1}
STEPS=${STEPS:-rate nchan latency nchan-latency}
step() { [[ " $STEPS " == *" $1 "* ]]; }

# ---- 1. sluice ----------------------------------------------------------------------------
if step rate; then
start_sluice rate
SEAT=$(new_seat)
"$CLIENT" sub "$SPORT" "/v1/seats/$SEAT/events" "$SUBS" "$MSGS" "$TIMEOUT" "$CTHREADS" >"$WORK/sub-sluice.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-sluice.out"
sleep 0.5
T0=$(cpu_ticks "$SPID")
curl -s -X POST -H 'Content-Type: application/json' -d "{\"text\":\"N=$MSGS\"}" \
    "http://127.0.0.1:$SPORT/v1/seats/$SEAT/messages" >/dev/null
sleep 0.2
AGENT=$(pgrep -P "$SPID" | head -1 || true)
wait "$SUBPID" || true
T1=$(cpu_ticks "$SPID")
A1=$([ -n "$AGENT" ] && [ -e "/proc/$AGENT/stat" ] && cpu_ticks "$AGENT" || echo 0)
report sluice "$WORK/sub-sluice.out" $((T1 - T0))
awk -v t="$A1" -v k="$TCK" 'BEGIN{printf "sluice: agent (python publisher) cpu_s=%.2f\n", t/k}'
echo "sluice: peak RSS $(grep VmHWM /proc/$SPID/status | awk '{print $2, $3}')"
kill "$SPID" 2>/dev/null || true
wait "$SPID" 2>/dev/null || true
fi

start_nginx() {  # sets NPORT NPID NWORKERS
    NPORT=$(free_port)
    NPFX=$WORK/nginx-$1
    mkdir -p "$NPFX"
    sed -e "s|@PORT@|$NPORT|g; s|@PREFIX@|$NPFX|g; s|@WORKERS@|$WORKERS|g" "$HERE/nchan.conf.in" >"$NPFX/nginx.conf"
    nginx -c "$NPFX/nginx.conf" -p "$NPFX/" -g "error_log $NPFX/error.log warn;" 2>"$NPFX/stderr" &
    NPID=$!
    PIDS+=("$NPID")
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$NPORT/pub" && break
        sleep 0.1
    done
    NWORKERS=$(pgrep -P "$NPID" | tr '\n' ' ')
}

# ---- 2. nginx + nchan ---------------------------------------------------------------------
if step nchan; then
start_nginx rate
"$CLIENT" sub "$NPORT" /sub "$SUBS" "$MSGS" "$TIMEOUT" "$CTHREADS" >"$WORK/sub-nchan.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-nchan.out"
sleep 0.5
# shellcheck disable=SC2086
T0=$(cpu_ticks "$NPID" $NWORKERS)
"$CLIENT" pub "$NPORT" /pub "$MSGS" 32 >"$WORK/pub-nchan.out" 2>&1 &
PUBPID=$!
PIDS+=("$PUBPID")
wait "$SUBPID" || true
# shellcheck disable=SC2086
T1=$(cpu_ticks "$NPID" $NWORKERS)
wait "$PUBPID" || true
report nchan "$WORK/sub-nchan.out" $((T1 - T0))
echo "nchan: publisher $(cat "$WORK/pub-nchan.out" | tr '\n' ' ')"
# shellcheck disable=SC2086
echo "nchan: worker peak RSS $(for p in $NWORKERS; do grep VmHWM /proc/$p/status | awk '{print $2}'; done | tr '\n' ' ')kB"
grep -i -E 'error|crit|alert' "$NPFX/error.log" | head -5 || true
kill "$NPID" 2>/dev/null || true
wait "$NPID" 2>/dev/null || true
fi

# ---- 3. sluice latency --------------------------------------------------------------------
LAT="$LAT_SUBS subscribers x $LAT_RATE frames/s, $LAT_FRAMES frames, $LAT_THREADS client threads"
if step latency; then
start_sluice lat
SEAT=$(new_seat)
"$CLIENT" sub "$SPORT" "/v1/seats/$SEAT/events" "$LAT_SUBS" "$LAT_FRAMES" "$TIMEOUT" "$LAT_THREADS" >"$WORK/sub-lat.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-lat.out"
sleep 0.5
T0=$(cpu_ticks "$SPID")
curl -s -X POST -H 'Content-Type: application/json' -d "{\"text\":\"N=$LAT_FRAMES RATE=$LAT_RATE\"}" \
    "http://127.0.0.1:$SPORT/v1/seats/$SEAT/messages" >/dev/null
wait "$SUBPID" || true
T1=$(cpu_ticks "$SPID")
echo "sluice latency ($LAT): $(grep '^subscribers=' "$WORK/sub-lat.out")"
awk -v t="$((T1 - T0))" -v k="$TCK" 'BEGIN{printf "sluice latency: server_cpu_s=%.2f\n", t/k}'
kill "$SPID" 2>/dev/null || true
wait "$SPID" 2>/dev/null || true
fi

# ---- 4. nginx + nchan latency -------------------------------------------------------------
if step nchan-latency; then
start_nginx lat
"$CLIENT" sub "$NPORT" /sub "$LAT_SUBS" "$LAT_FRAMES" "$TIMEOUT" "$LAT_THREADS" >"$WORK/sub-nlat.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-nlat.out"
sleep 0.5
# shellcheck disable=SC2086
T0=$(cpu_ticks "$NPID" $NWORKERS)
"$CLIENT" pub "$NPORT" /pub "$LAT_FRAMES" 1 "$LAT_RATE" >"$WORK/pub-nlat.out" 2>&1 &
PUBPID=$!
PIDS+=("$PUBPID")
wait "$SUBPID" || true
# shellcheck disable=SC2086
T1=$(cpu_ticks "$NPID" $NWORKERS)
wait "$PUBPID" || true
echo "nchan latency ($LAT): $(grep '^subscribers=' "$WORK/sub-nlat.out")"
awk -v t="$((T1 - T0))" -v k="$TCK" 'BEGIN{printf "nchan latency: server_cpu_s=%.2f\n", t/k}'
kill "$NPID" 2>/dev/null || true
wait "$NPID" 2>/dev/null || true
fi

# ---- 5. the floor: a server that only writes (bench/fanout_floor.cpp) ---------------------
if step floor-latency; then
FLOOR_THREADS=${FLOOR_THREADS:-2}
"$WORK/fanout_floor" "$LAT_SUBS" "$LAT_FRAMES" "$LAT_RATE" "$FLOOR_THREADS" "$WORK/floor-go" \
    >"$WORK/floor.out" 2>&1 &
FPID=$!
PIDS+=("$FPID")
wait_line "$WORK/floor.out" '^listening' || true
FPORT=$(awk '/^listening/{print $2}' "$WORK/floor.out")
"$CLIENT" sub "$FPORT" /sub "$LAT_SUBS" "$LAT_FRAMES" "$TIMEOUT" "$LAT_THREADS" >"$WORK/sub-floor.out" 2>&1 &
SUBPID=$!
PIDS+=("$SUBPID")
wait_ready "$WORK/sub-floor.out"
sleep 0.5
touch "$WORK/floor-go"
wait "$SUBPID" || true
wait "$FPID" || true
echo "floor latency ($LAT, $FLOOR_THREADS writer threads): $(grep '^subscribers=' "$WORK/sub-floor.out")"
grep '^floor:' "$WORK/floor.out" || cat "$WORK/floor.out"
fi
