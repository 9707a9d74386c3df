#!/usr/bin/env python3
"""What a full window costs in memory against its wire bytes (issue 31).

Usage: bench/window_rss.py SLUICE_BINARY [SEATS=1] [FRAMES=6000] [BYTES=1024]
Starts `sluice serve` (release build; `--threads 2`) with bench/fanout_agent.py as the process
agent, makes SEATS seats, reads the hub's VmRSS, then runs one turn of FRAMES rows of ~BYTES each
in every seat (as fast as the hub reads; the window's frame cap cuts it, 5,000 back to 4,000 by
default), waits until every turn has ended and the search index has read every transcript (its
background work), lets the hub settle for SETTLE seconds (env, default 3: past the hub's 2 s
look at its free heap) and reads VmRSS again and /metrics' sluice_window_bytes (the wire bytes
the windows hold). Prints the growth per window and its ratio to the window's wire bytes (the
issue's goal: <= 1.25). Before the baseline, every seat runs a 20-row turn (see main).
Bounded: one hub (ended at exit), its data dir removed.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_bench import FANOUT_AGENT, Hub, rss_kib  # noqa: E402


def wait_idle(hub, ids, until):
    while time.monotonic() < until:
        if all(hub.get(f"/v1/seats/{s}")["state"] == "idle" for s in ids):
            return
        time.sleep(0.5)


def main():
    binary = sys.argv[1]
    seats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    frames = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 1024
    hub = Hub(binary, agent=f"python3 {FANOUT_AGENT}")
    try:
        ids = [hub.new_seat(f"w{i}") for i in range(seats)]
        # A short turn in every seat first: the code a turn runs (the agent's start, parsing,
        # the journal, the search index) is paged in and the first-use buffers made before the
        # baseline, so the growth is the windows'. Its 20 rows are cut from the window later.
        for s in ids:
            hub.post(f"/v1/seats/{s}/messages", {"text": f"N=20 BYTES={size}"})
        wait_idle(hub, ids, time.monotonic() + 120)
        time.sleep(3)
        rss0 = rss_kib(hub.pid)
        anon0 = rss_kib(hub.pid, "RssAnon")
        for s in ids:
            hub.post(f"/v1/seats/{s}/messages", {"text": f"N={frames} BYTES={size}"})
        until = time.monotonic() + 600
        wait_idle(hub, ids, until)
        while time.monotonic() < until:
            if hub.get("/v1/search?q=zzzz")["indexing"]["complete"]:
                break
            time.sleep(0.5)
        time.sleep(float(os.environ.get("SETTLE", "3")))
        rss1 = rss_kib(hub.pid)
        anon1 = rss_kib(hub.pid, "RssAnon")
        held = hub.metric("sluice_window_bytes") or 0
        held_frames = hub.metric("sluice_window_frames") or 0
        per = (rss1 - rss0) * 1024 / seats
        print(f"{seats} seats x {frames} frames of ~{size} B: windows hold {held_frames:.0f} frames, "
              f"{held / 1e6:.1f} MB of wire bytes ({held / seats / 1e6:.2f} MB each)")
        print(f"hub RSS {rss0 / 1024:.1f} -> {rss1 / 1024:.1f} MiB: {per / 1e6:.2f} MB per window, "
              f"{per / (held / seats):.2f}x its wire bytes (anonymous pages alone: "
              f"{(anon1 - anon0) * 1024 / held:.2f}x)")
    finally:
        hub.stop()


if __name__ == "__main__":
    main()
