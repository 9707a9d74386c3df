#!/usr/bin/env python3
"""Threads and memory per idle seat: start `sluice serve` on loopback, create N seats through the
API, and report the server's thread count and RSS growth per seat.

Usage: bench/hub_seats.py SLUICE_BINARY [builtin counts…] [--process N]
       (default: builtin 1 100 1000, then 100 process seats)
Each count runs in a fresh hub and data dir. A process seat hosts `tests/support/fake_agent.py`
(its process starts with the seat's first turn; an idle seat has none). One turn is run on one
seat of each hub before measuring, so the turn machinery has been exercised and torn down.
Bounded: loopback only, one server process at a time (ended at exit), at most ~1 minute per run.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_AGENT = os.path.join(HERE, "..", "tests", "support", "fake_agent.py")


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def call(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def wait_idle(port, seat, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        seats = call(port, "GET", "/v1/seats")["seats"]
        s = next(x for x in seats if x.get("id", x.get("seat")) == seat)
        if s.get("state") == "idle":
            return
        time.sleep(0.1)
    raise RuntimeError("turn did not end")


def run(binary, kind, n):
    data = tempfile.mkdtemp(prefix="sluice-seats-")
    args = [binary, "serve", "--listen", "127.0.0.1:0", "--data", data, "--threads", "2", "--no-token",
            "--pace", "0"]
    if kind == "process":
        args += ["--agent-cmd", f"python3 {FAKE_AGENT}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        time.sleep(0.3)
        base_rss, base_threads = status(proc.pid, "VmRSS"), status(proc.pid, "Threads")
        seats = []
        for i in range(n):
            seats.append(call(port, "POST", "/v1/seats", {"name": f"s{i}", "agent": kind})["seat"])
        call(port, "POST", f"/v1/seats/{seats[0]}/messages", {"text": "hello"})
        wait_idle(port, seats[0])
        time.sleep(1.0)
        rss, threads = status(proc.pid, "VmRSS"), status(proc.pid, "Threads")
        return {"kind": kind, "seats": n, "threads_before": base_threads, "threads_after": threads,
                "rss_before_kib": base_rss, "rss_after_kib": rss,
                "rss_per_seat_bytes": round((rss - base_rss) * 1024 / max(1, n))}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        subprocess.run(["rm", "-rf", data])


def main():
    binary = sys.argv[1]
    rest = sys.argv[2:]
    process = 100
    if "--process" in rest:
        i = rest.index("--process")
        process = int(rest[i + 1])
        rest = rest[:i] + rest[i + 2:]
    counts = [int(x) for x in rest] or [1, 100, 1000]
    for n in counts:
        print(json.dumps(run(binary, "builtin", n)), flush=True)
    if process > 0:
        print(json.dumps(run(binary, "process", process)), flush=True)


main()
