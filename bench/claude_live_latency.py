#!/usr/bin/env python3
"""Live row -> subscriber latency of `sluice serve --claude-projects`: a writer appends rows to a
session file (as a `claude` in a terminal does) while SSE subscribers watch its seat; each row
carries its write time (CLOCK_MONOTONIC, the same clock the readers use: one process).

Usage: bench/claude_live_latency.py SLUICE_BINARY [ROWS] [INTERVAL_MS] [SUBSCRIBERS]
  defaults: 400 rows, 25 ms apart, 4 subscribers. Prints p50/p90/p99/max over every
  (row, subscriber) receipt. Loopback only; the hub is ended at exit, temp dirs removed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = os.path.join(
    HERE, "..", "..", "shared", "fixtures", "alfredjeanlab_claudeless",
    "tests_fixtures_v2.1.29_compact-command.projects_-private-var-folders-t5-"
    "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl")
SID = "aaaaaaaa-0000-4000-8000-000000000000"


def subscriber(port, rows, got, ready):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/seats/c-{SID}/events")
    with urllib.request.urlopen(req, timeout=120) as r:
        event = None
        while len(got) < rows:
            line = r.readline()
            if not line:
                return
            now = time.monotonic_ns()
            if line.startswith(b"event: "):
                event = line[7:].strip()
            elif line.startswith(b"data: ") and event == b"connected":
                ready.set()
            elif line.startswith(b"data: ") and event == b"frame":
                row = json.loads(line[6:])["row"]
                c = row.get("message", {}).get("content")
                text = c if isinstance(c, str) else (c[0].get("text", "") if c else "")
                if text.startswith("live "):
                    _, i, written = text.split(" ")
                    got[int(i)] = now - int(written)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    interval = (int(sys.argv[3]) if len(sys.argv) > 3 else 25) / 1000
    subs = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    tmp = tempfile.mkdtemp(prefix="sluice-live-bench-")
    try:
        proj = os.path.join(tmp, "projects", "-work-live")
        os.makedirs(proj)
        file = os.path.join(proj, SID + ".jsonl")
        shutil.copy(SMALL, file)
        p = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--no-token", "--data",
             os.path.join(tmp, "data"), "--claude-projects", os.path.join(tmp, "projects")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = None
            while port is None:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError("the hub exited")
                if line.startswith("listening on"):
                    port = int(line.rsplit(":", 1)[1])
            results = [dict() for _ in range(subs)]
            readies = [threading.Event() for _ in range(subs)]
            threads = [threading.Thread(target=subscriber, args=(port, rows, results[k], readies[k]),
                                        daemon=True) for k in range(subs)]
            for t in threads:
                t.start()
            for e in readies:
                e.wait(60)
            with open(file, "a") as out:
                for i in range(rows):
                    time.sleep(interval)
                    user = i % 2 == 0
                    text = f"live {i} {time.monotonic_ns()}"
                    content = text if user else [{"type": "text", "text": text}]
                    row = {"type": "user" if user else "assistant", "uuid": f"w{i}",
                           "sessionId": SID,
                           "message": {"role": "user" if user else "assistant",
                                       "content": content}}
                    out.write(json.dumps(row, separators=(",", ":")) + "\n")
                    out.flush()
            for t in threads:
                t.join(30)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
        lat = sorted(v / 1e6 for r in results for v in r.values())
        missing = rows * subs - len(lat)
        if not lat:
            print("no rows received")
            return 1

        def q(f):
            return lat[min(len(lat) - 1, int(f * len(lat)))]
        print(f"{rows} rows x {subs} subscribers, {interval * 1000:.0f} ms apart: "
              f"{len(lat)} receipts ({missing} missing); latency ms p50 {q(0.5):.2f} "
              f"p90 {q(0.9):.2f} p99 {q(0.99):.2f} max {lat[-1]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
