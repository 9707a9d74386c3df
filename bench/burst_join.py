#!/usr/bin/env python3
"""Subscribers joining during a burst (issue 11): the hub's peak RSS while N SSE subscribers
connect to a seat that streams a burst of F frames, and whether every subscriber got a correct
sequence (none lost, none duplicated, each one ending at the burst's last frame).

Starts `sluice serve` on 127.0.0.1:0 with bench/fanout_agent.py as the agent (one assistant
row of ~BYTES bytes per frame, RATE rows a second), then asks one seat for F frames and connects the
N subscribers while they stream (spread over the first 90 % of the burst), each reading as
fast as it can: bench/fanout_client.cpp `join` (epoll, THREADS threads) checks every
subscriber's rows "MSG<k>" (row k of the burst is frame seq first + 1 + k, so k orders as seq
does, and a connected window's frames carry no seq of their own) from the first it sees to the
last: none lost, none duplicated. RSS is sampled every 20 ms.

Goal: peak RSS < 2 x the window + N x socket buffers, where the window is the seat's window
bytes (GET /v1/seats/{id}: window.bytes, its largest during the run) and the socket-buffer term
is the send buffer an accepted TCP socket starts with (net.ipv4.tcp_wmem's default; the kernel
may autotune it up to tcp_wmem's max, reported too, with what `ss -tm` shows of the hub's
sockets once every subscriber has joined). Kernel socket buffers are not in the
process's RSS, so the term is a generous bound on what each connection costs in user space.

Usage: bench/burst_join.py SLUICE_BINARY [N=1000] [F=6000] [RATE=2000] [BYTES=1024] [THREADS=2]
Bounded: loopback only, one hub process (ended by its pid at exit), about a minute.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from sluice_bench import FANOUT_AGENT, HERE, Hub, raise_nofile, rss_kib, tcp_wmem

def sample_rss(pid, stop, out):
    while not stop.is_set():
        out.append(rss_kib(pid))
        time.sleep(0.02)


def build_client():
    """Compiles bench/fanout_client.cpp and fanout_conn.cpp (g++ -O2, as bench/fanout.sh does)
    into a temp dir."""
    out = os.path.join(tempfile.mkdtemp(prefix="sluice-burst-"), "fanout_client")
    subprocess.run(["g++", "-std=c++20", "-O2", "-pthread", os.path.join(HERE, "fanout_client.cpp"),
                    os.path.join(HERE, "fanout_conn.cpp"), "-o", out], check=True)
    return out


def send_buffers(port):
    """The hub's side of its established connections now (`ss -tmn`): how many, and the mean and
    largest send buffer (skmem tb: SO_SNDBUF as the kernel has autotuned it), bytes."""
    out = subprocess.run(["ss", "-tmnH", "state", "established", f"sport = :{port}"],
                         capture_output=True, text=True).stdout
    tbs = [int(m) for m in re.findall(r"tb(\d+)", out)]
    if not tbs:
        return {"sockets": 0}
    return {"sockets": len(tbs), "mean_tb": sum(tbs) // len(tbs), "max_tb": max(tbs)}


def run(hub, client, n, frames, rate, row_bytes, threads):
    seat = hub.new_seat("burst")
    time.sleep(0.5)
    base = rss_kib(hub.pid)
    samples = []
    sampling = threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(hub.pid, sampling, samples))
    sampler.start()
    burst_s = frames / rate
    spread = burst_s * 0.9  # joins spread over the first 90 % of the burst: the window moves
    hub.post(f"/v1/seats/{seat}/messages", {"text": f"N={frames} RATE={rate} BYTES={row_bytes}"})
    began = time.time()
    time.sleep(0.2)
    swarm = subprocess.Popen(
        [client, "join", str(hub.port), f"/v1/seats/{seat}/events", str(n), str(frames), "120",
         str(threads), str(spread)], stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, SLUICE_TOKEN=hub.token))
    window_max = 0
    burst_end = None
    sndbuf = None
    while True:
        if sndbuf is None and time.time() - began > spread + 0.2:
            sndbuf = send_buffers(hub.port)  # once every subscriber has joined
        info = hub.get(f"/v1/seats/{seat}")
        window_max = max(window_max, info["window"]["bytes"])
        if info.get("state") == "idle" and info.get("turns", 0) >= 1:
            burst_end = time.time() - began
            break
        time.sleep(0.1)
    out = swarm.communicate(timeout=180)[0].strip()
    took = time.time() - began
    sampling.set()
    sampler.join()
    result = dict(kv.split("=", 1) for kv in out.split())
    result = {k: (float(v) if "." in v else int(v)) for k, v in result.items()}
    wmem = tcp_wmem()
    peak = max(samples)
    goal_kib = (2 * window_max + n * wmem[1]) / 1024
    return {
        "subscribers": n, "frames": frames, "rate": rate, "row_bytes": row_bytes,
        "join_spread_s": round(spread, 2),
        "burst_s": round(burst_end, 2), "took_s": round(took, 1), "seat_frames": info["frames"],
        "window_bytes_max": window_max, "rss_before_kib": base, "rss_peak_kib": peak,
        "rss_growth_kib": peak - base, "tcp_wmem": wmem, "goal_kib": round(goal_kib),
        "goal_met_by_peak": peak < goal_kib, "goal_met_by_growth": peak - base < goal_kib,
        "goal_kib_with_wmem_max": round((2 * window_max + n * wmem[2]) / 1024),
        "send_buffers_after_joins": sndbuf,
        "let_go_lagged": hub.metric('sluice_subscriber_let_go_total{reason="lagged"}'),
        "let_go_write_timeout": hub.metric('sluice_subscriber_let_go_total{reason="write_timeout"}'),
        "swarm": result,
    }


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    frames = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 2000
    row_bytes = int(sys.argv[5]) if len(sys.argv) > 5 else 1024
    threads = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    raise_nofile(n + 256)
    client = build_client()
    hub = Hub(binary, agent=f"python3 {FANOUT_AGENT}")
    try:
        print(json.dumps(run(hub, client, n, frames, rate, row_bytes, threads)), flush=True)
    finally:
        hub.stop()
        subprocess.run(["rm", "-rf", os.path.dirname(client)])


main()
