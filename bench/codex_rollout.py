#!/usr/bin/env python3
"""`sluice serve --codex-sessions`: the first `connected` of a large never-seen Codex rollout
(then again with its index kept), side by side with `tail -c` of the rollout bytes that hold the
window and a parse of them, and the hub's peak RSS against the window.

Usage: bench/codex_rollout.py SLUICE_BINARY [MB | ROLLOUT]
  MB       size of the generated rollout in MB (default 200; the issue's figure is 2048): the
           real rollout tests/fixtures/codex/exec-approvals.jsonl (2 turns, 32 lines, 10 frames)
           repeated after its session meta, so its row mix is codex 0.169.0's own
  ROLLOUT  an existing rollout to use instead (hard-linked; same filesystem as the temp dir)
Bounded: loopback only, one server at a time (ended at exit), temp dirs removed at exit.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_bench import serve_projects, stop_process  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "codex", "exec-approvals.jsonl")
THREAD = "01a24e22-ffff-7000-8000-00000000b16b"
FRAMES_PER_COPY = 10  # exec-approvals.jsonl: 2 prompts, 2 calls, 2 outputs, 2 answers, 2 ends


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
    return 0


def generate(path, mb):
    """Writes a rollout of about `mb` MB; returns its frames."""
    with open(FIXTURE, "rb") as f:
        lines = f.read().split(b"\n")
    head, body = lines[0] + b"\n", b"\n".join(lines[1:]).rstrip(b"\n") + b"\n"
    copies = max(1, (mb * 1_000_000 - len(head)) // len(body))
    with open(path, "wb") as out:
        out.write(head)
        chunk = body * 64
        for _ in range(copies // 64):
            out.write(chunk)
        for _ in range(copies % 64):
            out.write(body)
    return copies * FRAMES_PER_COPY


def first_connected(port, seat):
    """Seconds until the whole `connected` event of `seat` has arrived, and its bytes."""
    t0 = time.monotonic()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/seats/{seat}/events")
    with urllib.request.urlopen(req, timeout=600) as r:
        event = None
        while True:
            line = r.readline()
            if not line:
                raise RuntimeError("the stream ended before connected")
            if line.startswith(b"event: "):
                event = line[7:].strip()
            if line.startswith(b"data: ") and event == b"connected":
                return time.monotonic() - t0, len(line)


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return json.load(r)


def index_kept(data, limit=1200):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        for _root, _dirs, files in os.walk(data):
            if "key.json" in files:
                return time.monotonic() - t0
        time.sleep(0.05)
    raise RuntimeError("no index kept")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else "200"
    tmp = tempfile.mkdtemp(prefix="sluice-codex-bench-")
    try:
        day = os.path.join(tmp, "sessions", "2026", "12", "07")
        os.makedirs(day)
        big = os.path.join(day, f"rollout-2026-12-07T01-33-27-{THREAD}.jsonl")
        if arg.isdigit():
            frames = generate(big, int(arg))
        else:
            os.link(arg, big)
            frames = None
        subprocess.run(["cat", big], stdout=subprocess.DEVNULL, check=True)  # warm page cache
        size = os.path.getsize(big)
        data = os.path.join(tmp, "data")
        seat = "codex-" + THREAD
        for run in ("never seen", "index kept"):
            p, port = serve_projects(binary, data, os.path.join(tmp, "sessions"),
                                     flag="--codex-sessions")
            try:
                before = status(p.pid, "VmHWM")
                wall, nbytes = first_connected(port, seat)
                after = status(p.pid, "VmHWM")
                win = get(port, f"/v1/seats/{seat}")["window"]
                if run == "never seen":
                    kept = index_kept(data)
                    print(f"index kept {kept:.2f} s after connected (background count; peak RSS "
                          f"by then {status(p.pid, 'VmHWM') / 1024:.0f} MiB)")
                    if frames is None:
                        frames = get(port, f"/v1/seats/{seat}")["frames"]
            finally:
                stop_process(p)
            print(f"first connected, {size / 1e6:.0f} MB rollout ({run}): {wall:.2f} s, "
                  f"{nbytes / 1e6:.1f} MB event, window {win['frames']} frames "
                  f"{win['bytes'] / 1e6:.1f} MB; peak RSS {before / 1024:.0f} -> "
                  f"{after / 1024:.0f} MiB")
        # The rollout bytes that hold the window: the file's frames are spread evenly (a repeated
        # fixture), so its share of the file's bytes.
        span = size * win["frames"] // max(frames, 1)
        t0 = time.monotonic()
        tail = subprocess.run(["tail", "-c", str(span), big], capture_output=True,
                              check=True).stdout
        t1 = time.monotonic()
        for line in tail.split(b"\n")[1:]:
            if line:
                json.loads(line)
        t2 = time.monotonic()
        print(f"tail -c {span} (the window's rollout bytes): {t1 - t0:.2f} s; json.loads of each "
              f"line (Python): {t2 - t1:.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
