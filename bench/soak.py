#!/usr/bin/env python3
"""The soak (issue 11): S seats streaming turns, N SSE subscribers churning, for DURATION
seconds; the hub's RSS sampled every second and its slope after warm-up reported; at the end
every subscriber's frame sequence is compared with the seat's history (GET /history).

Each seat runs turns back to back (bench/fanout_agent.py: TURN frames of ~1 KiB at RATE a
second). Subscriber i watches seat i % S and churns: it connects (with Last-Event-ID once it
has one), reads for 2-10 s, stalls (reads nothing, a 16 KiB receive buffer) for 1-5 s, then
either reads on or vanishes (closes at once, dropping what it had not read) and reconnects
after 0-1 s with the id of the last event it read whole. At the end the turns stop, every
subscriber reads up to its seat's last frame, and its frames (all connections together) must be
exactly the history's from its first frame on: 0 lost, 0 duplicated.

RSS slope: a least-squares line through the samples after the warm-up (the first 20 % of the
run: windows fill to their cap, thread arenas and buffers reach their size), KiB per minute.

Usage: bench/soak.py SLUICE_BINARY [DURATION=600] [S=20] [N=200] [RATE=50] [TURN=500]
Bounded: loopback only, one hub process (ended by its pid at exit), DURATION plus ~30 s;
transcripts of about DURATION x S x RATE KiB in a temp dir removed at the end.
"""
import asyncio
import json
import random
import re
import sys
import threading
import time

from sluice_bench import FANOUT_AGENT, Hub, open_sse, raise_nofile, read_head, rss_kib

FRAME_SEQ = re.compile(rb'data: \{"seq":(\d+),"row":')


class Watcher:
    """One churning subscriber: every frame seq it read, in order, across its connections."""

    def __init__(self, seat):
        self.seat = seat
        self.seqs = []
        self.dup = 0
        self.last_id = None
        self.connects = 0
        self.resumed = 0
        self.connected = 0
        self.vanished = 0
        self.stalls = 0
        self.ended_by_hub = 0
        self.byes = set()

    def take_event(self, block):
        eid = None
        kind = None
        for line in block.split(b"\n"):
            if line.startswith(b"id: "):
                eid = line[4:].decode()
            elif line.startswith(b"event: "):
                kind = line[7:]
            elif line.startswith(b": bye"):
                self.byes.add(line.decode(errors="replace"))
        if kind == b"resumed":
            self.resumed += 1
        elif kind == b"connected":
            # The window: its frames are seqs first, first + 1, ...; those it repeats of what
            # this subscriber had are not duplicates (a connected replaces, it does not resend).
            self.connected += 1
            window = json.loads(block[block.index(b"data: ") + 6:])["window"]
            for seq in range(window["first"], window["first"] + len(window["frames"])):
                if not self.seqs or seq > self.seqs[-1]:
                    self.seqs.append(seq)
        elif kind == b"frame":
            seq = int(FRAME_SEQ.search(block).group(1))
            if self.seqs and seq <= self.seqs[-1]:
                self.dup += 1
            else:
                self.seqs.append(seq)
        if eid:
            self.last_id = eid


async def connect(hub, w):
    reader, writer = await open_sse(hub, w.seat, w.last_id, rcvbuf=16 * 1024)
    w.connects += 1
    return reader, writer


async def read_for(reader, w, seconds, buf):
    """Reads whole events for `seconds` (or until the stream ends); returns (buffer, ended)."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return buf, False
        try:
            chunk = await asyncio.wait_for(reader.read(1 << 16), left)
        except asyncio.TimeoutError:
            return buf, False
        if not chunk:
            return buf, True
        buf += chunk
        while True:
            cut = buf.find(b"\n\n")
            if cut < 0:
                break
            w.take_event(buf[:cut])
            buf = buf[cut + 2:]


async def churn(hub, w, stop, rng):
    while not stop.is_set():
        reader, writer = await connect(hub, w)
        try:
            if await read_head(reader) != 200:
                await asyncio.sleep(0.5)
                continue
            buf = b""
            while not stop.is_set():
                buf, ended = await read_for(reader, w, rng.uniform(2, 10), buf)
                if ended:
                    w.ended_by_hub += 1  # let go (its reason is in byes): reconnect
                    break
                w.stalls += 1
                await asyncio.sleep(rng.uniform(1, 5))  # stalled: nothing read
                if rng.random() < 0.5:
                    w.vanished += 1  # gone at once; what it had not read is lost to it
                    break
        finally:
            writer.transport.abort()
        await asyncio.sleep(rng.uniform(0, 1))
    # The end: read on from where it is until its seat's last frame.
    return


async def finish(hub, w, last_seq):
    reader, writer = await connect(hub, w)
    try:
        await read_head(reader)
        buf = b""
        deadline = time.monotonic() + 60
        while (not w.seqs or w.seqs[-1] < last_seq) and time.monotonic() < deadline:
            buf, ended = await read_for(reader, w, 1, buf)
            if ended:
                break
    finally:
        writer.transport.abort()


def seat_turns(hub, seat, turn, rate, stop, counts):
    while not stop.is_set():
        hub.post(f"/v1/seats/{seat}/messages", {"text": f"N={turn} RATE={rate}"})
        time.sleep(turn / rate * 0.9)
        while True:
            s = hub.get(f"/v1/seats/{seat}")
            if s.get("state") == "idle":
                break
            time.sleep(0.1)
        counts[seat] = counts.get(seat, 0) + 1


def sample_rss(pid, stop, out, began):
    while not stop.is_set():
        out.append((time.time() - began, rss_kib(pid)))
        stop.wait(1.0)


def slope_kib_per_min(points):
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    return sxy / sxx * 60 if sxx else 0.0


async def run(hub, duration, n_seats, n_subs, rate, turn):
    seats = [hub.new_seat(f"soak{i}") for i in range(n_seats)]
    began = time.time()
    samples = []
    sampling = threading.Event()
    threading.Thread(target=sample_rss, args=(hub.pid, sampling, samples, began), daemon=True).start()
    turning = threading.Event()
    turns = {}
    posters = [threading.Thread(target=seat_turns, args=(hub, s, turn, rate, turning, turns))
               for s in seats]
    for t in posters:
        t.start()
    stop = asyncio.Event()
    watchers = [Watcher(seats[i % n_seats]) for i in range(n_subs)]
    rng = random.Random(11)
    tasks = []
    for w in watchers:
        tasks.append(asyncio.create_task(churn(hub, w, stop, random.Random(rng.random()))))
        await asyncio.sleep(0.01)
    await asyncio.sleep(max(0, duration - (time.time() - began)))
    turning.set()
    for t in posters:
        await asyncio.to_thread(t.join)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    sampling.set()
    history = {s: await asyncio.to_thread(hub.history_seqs, s) for s in seats}
    await asyncio.gather(*(finish(hub, w, history[w.seat][-1]) for w in watchers))
    lost = dup = unequal = 0
    for w in watchers:
        h = history[w.seat]
        if not w.seqs:
            unequal += 1
            continue
        want = h[h.index(w.seqs[0]):]
        got = set(w.seqs)
        lost += sum(1 for s in want if s not in got)
        dup += w.dup
        unequal += w.seqs != want
    warm = [p for p in samples if p[0] >= duration * 0.2 and p[0] <= duration]
    return {
        "duration_s": duration, "seats": n_seats, "subscribers": n_subs, "rate": rate,
        "turn_frames": turn, "turns": sum(turns.values()),
        "frames_total": sum(len(h) for h in history.values()),
        "rss_start_kib": samples[0][1], "rss_at_warm_kib": warm[0][1] if warm else None,
        "rss_end_kib": warm[-1][1] if warm else None, "rss_peak_kib": max(p[1] for p in samples),
        "slope_after_warmup_kib_per_min": round(slope_kib_per_min(warm), 1),
        "connects": sum(w.connects for w in watchers),
        "resumed": sum(w.resumed for w in watchers),
        "connected": sum(w.connected for w in watchers),
        "vanished": sum(w.vanished for w in watchers), "stalls": sum(w.stalls for w in watchers),
        "ended_by_hub": sum(w.ended_by_hub for w in watchers),
        "byes": sorted(set().union(*(w.byes for w in watchers))),
        "lost": lost, "duplicated": dup, "sequences_unequal_to_history": unequal,
        "let_go_lagged": hub.metric('sluice_subscriber_let_go_total{reason="lagged"}'),
        "let_go_write_timeout": hub.metric('sluice_subscriber_let_go_total{reason="write_timeout"}'),
        "rss_series_kib": [p[1] for p in samples[:: max(1, len(samples) // 60)]],
    }


def main():
    args = sys.argv[1:] + [None] * 6
    binary = args[0]
    duration = float(args[1] or 600)
    n_seats = int(args[2] or 20)
    n_subs = int(args[3] or 200)
    rate = float(args[4] or 50)
    turn = int(args[5] or 500)
    raise_nofile(n_subs + 256)
    hub = Hub(binary, agent=f"python3 {FANOUT_AGENT}")
    try:
        print(json.dumps(asyncio.run(run(hub, duration, n_seats, n_subs, rate, turn))), flush=True)
    finally:
        hub.stop()


main()
