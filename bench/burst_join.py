#!/usr/bin/env python3
"""Subscribers joining during a burst (issue 11): the hub's peak RSS while N SSE subscribers
connect to a seat that streams a burst of F frames, and whether every subscriber got a correct
sequence (by row, which orders as seq does: none lost, none duplicated, each one ending at the burst's
last row).

Starts `sluice serve` on 127.0.0.1:0 with bench/fanout_agent.py as the agent (one assistant
row of ~1 KiB per frame, RATE rows a second), then asks one seat for F frames and connects the
N subscribers while they stream (spread over the first part of the burst), each reading as
fast as it can. RSS is sampled every 20 ms.

Goal: peak RSS < 2 x the window + N x socket buffers, where the window is the seat's window
bytes (GET /v1/seats/{id}: window.bytes, its largest during the run) and the socket-buffer term
is the send buffer an accepted TCP socket starts with (net.ipv4.tcp_wmem's default; the kernel
may autotune it up to tcp_wmem's max, reported too). Kernel socket buffers are not in the
process's RSS, so the term is a generous bound on what each connection costs in user space.

Usage: bench/burst_join.py SLUICE_BINARY [N=1000] [F=6000] [RATE=2000]
Bounded: loopback only, one hub process (ended by its pid at exit), about a minute.
"""
import asyncio
import json
import re
import sys
import threading
import time

from sluice_bench import FANOUT_AGENT, Hub, open_sse, raise_nofile, read_head, rss_kib, tcp_wmem

# Row k of the burst carries "MSG<k>;T" (bench/fanout_agent.py) once, in a connected window and
# in a frame event alike; in one turn row k is frame seq (first + 1 + k), so k orders frames as
# seq does, and a window's frames (which carry no seq of their own) are counted too.
ROW_K = re.compile(rb'MSG(\d+);T')


class Seen:
    """One subscriber's rows of the burst by k: the first, the last, what was lost or repeated."""

    def __init__(self):
        self.first = None
        self.last = None
        self.lost = 0
        self.dup = 0
        self.count = 0
        self.closed_early = False
        self.comments = b""

    def take(self, seq):
        self.count += 1
        if self.last is None:
            self.first = seq
        elif seq <= self.last:
            self.dup += 1
            return
        elif seq != self.last + 1:
            self.lost += seq - self.last - 1
        self.last = seq


async def subscriber(hub, seat, seen, stop):
    reader, writer = await open_sse(hub, seat)
    try:
        if await read_head(reader) != 200:
            seen.closed_early = True
            return
        carry = b""
        while not stop.is_set():
            try:
                chunk = await asyncio.wait_for(reader.read(1 << 18), 0.5)
            except asyncio.TimeoutError:
                continue
            if not chunk:
                seen.closed_early = True
                return
            data = carry + chunk
            end = 0
            for m in ROW_K.finditer(data):
                seen.take(int(m.group(1)))
                end = m.end()
            if b"\n: bye" in data or data.startswith(b": bye"):
                seen.comments += data[data.find(b": bye"):][:200]
            carry = data[max(end, len(data) - 32):]  # a match cut by the read is kept
    finally:
        writer.close()


def sample_rss(pid, stop, out):
    while not stop.is_set():
        out.append(rss_kib(pid))
        time.sleep(0.02)


async def run(hub, n, frames, rate):
    seat = hub.new_seat("burst")
    time.sleep(0.5)
    base = rss_kib(hub.pid)
    samples = []
    sampling = threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(hub.pid, sampling, samples))
    sampler.start()
    window_max = 0
    stop = asyncio.Event()
    seen = [Seen() for _ in range(n)]
    burst_s = frames / rate
    hub.post(f"/v1/seats/{seat}/messages", {"text": f"N={frames} RATE={rate}"})
    began = time.time()
    await asyncio.sleep(min(0.2, burst_s / 10))
    tasks = []
    # Joins spread over the first 60 % of the burst: the window moves between them.
    spread = burst_s * 0.6
    for i in range(n):
        tasks.append(asyncio.create_task(subscriber(hub, seat, seen[i], stop)))
        due = began + 0.2 + spread * (i + 1) / n
        await asyncio.sleep(max(0, due - time.time()))
    joined = time.time() - began
    while True:
        info = await asyncio.to_thread(hub.get, f"/v1/seats/{seat}")
        window_max = max(window_max, info["window"]["bytes"])
        if info.get("state") == "idle" and info.get("turns", 0) >= 1:
            break
        await asyncio.sleep(0.2)
    last_seq = frames - 1  # the burst's last row
    deadline = time.time() + 60
    while time.time() < deadline and not all(s.last == last_seq or s.closed_early for s in seen):
        await asyncio.sleep(0.1)
    took = time.time() - began
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    sampling.set()
    sampler.join()
    lagged = hub.metric('sluice_subscriber_let_go_total{reason="lagged"}')
    timed_out = hub.metric('sluice_subscriber_let_go_total{reason="write_timeout"}')
    wmem = tcp_wmem()
    peak = max(samples)
    goal_kib = (2 * window_max + n * wmem[1]) / 1024
    complete = [s for s in seen if s.last == last_seq and s.lost == 0 and s.dup == 0]
    return {
        "subscribers": n, "frames": frames, "rate": rate, "joined_within_s": round(joined, 2),
        "took_s": round(took, 1), "seat_frames": info["frames"], "window_bytes_max": window_max,
        "rss_before_kib": base, "rss_peak_kib": peak,
        "tcp_wmem": wmem, "goal_kib": round(goal_kib),
        "goal_met": peak < goal_kib,
        "goal_kib_with_wmem_max": round((2 * window_max + n * wmem[2]) / 1024),
        "complete_subscribers": len(complete),
        "lost_total": sum(s.lost for s in seen), "dup_total": sum(s.dup for s in seen),
        "closed_early": sum(1 for s in seen if s.closed_early),
        "not_at_last_seq": sum(1 for s in seen if s.last != last_seq),
        "frames_received_total": sum(s.count for s in seen),
        "first_row_range": [min(s.first for s in seen if s.first is not None),
                            max(s.first for s in seen if s.first is not None)],
        "let_go_lagged": lagged, "let_go_write_timeout": timed_out,
        "bye_comments": sorted({s.comments.decode(errors="replace") for s in seen if s.comments}),
    }


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    frames = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 2000
    raise_nofile(n + 256)
    hub = Hub(binary, agent=f"python3 {FANOUT_AGENT}")
    try:
        print(json.dumps(asyncio.run(run(hub, n, frames, rate))), flush=True)
    finally:
        hub.stop()


main()
