#!/usr/bin/env python3
"""`sluice serve --claude-projects`: listing many session files, and the first `connected` of a
large never-seen transcript (then again with its index kept), side by side with `tail -c` of the
window's bytes.

Usage: bench/claude_projects.py SLUICE_BINARY [FILES] [COPIES | LARGE_FILE]
  FILES   session files to list (default 10000: 100 project folders of 100), hard links to two
          fixture transcripts (13.5 KiB and 1 MiB), so the tree costs no disk; 0 skips the listing
  COPIES  copies of the 1 MiB fixture concatenated into the large transcript (default 100:
          ~105 MB)
  LARGE_FILE  an existing transcript to use as the large one instead (hard-linked into the tree,
          e.g. the 2.5 GiB file bench/gen_transcript.py writes; same filesystem as the temp dir)
Bounded: loopback only, one server at a time (ended at exit), temp dirs removed at exit.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_bench import serve_projects  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "shared", "fixtures")
SMALL = os.path.join(
    FIXTURES, "alfredjeanlab_claudeless",
    "tests_fixtures_v2.1.29_compact-command.projects_-private-var-folders-t5-"
    "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl")
LARGE = os.path.join(
    FIXTURES, "iansherr_claude-code-log",
    "test_test_data_real_projects_-src-deep-manifest_a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl")


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def cpu_seconds(pid):
    """User + system CPU time the process has used (a shared machine's load inflates wall time,
    not this)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(binary, data, projects):
    t0 = time.monotonic()
    p, port = serve_projects(binary, data, projects)
    return p, port, time.monotonic() - t0


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)


def first_connected(port, seat):
    """Seconds until the whole `connected` event of `seat` has arrived, and its bytes."""
    t0 = time.monotonic()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/seats/{seat}/events")
    with urllib.request.urlopen(req, timeout=600) as r:
        got = 0
        event = None
        while True:
            line = r.readline()
            got += len(line)
            if line.startswith(b"event: "):
                event = line[7:].strip()
            if line.startswith(b"data: ") and event == b"connected":
                return time.monotonic() - t0, len(line)


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return json.load(r)


def index_kept_after(data, t0, limit=600):
    """Seconds from `t0` until a seat's key.json (written with its index) exists under `data`."""
    while time.monotonic() - t0 < limit:
        for _root, _dirs, files in os.walk(data):
            if "key.json" in files:
                return time.monotonic() - t0
        time.sleep(0.02)
    raise RuntimeError("no index kept")


def listing(binary, files):
    tmp = tempfile.mkdtemp(prefix="sluice-cp-bench-")
    try:
        small = os.path.join(tmp, "small.jsonl")
        large = os.path.join(tmp, "large.jsonl")
        shutil.copy(SMALL, small)
        shutil.copy(LARGE, large)
        projects = os.path.join(tmp, "projects")
        per = 100
        for d in range((files + per - 1) // per):
            pd = os.path.join(projects, f"-work-p{d:03d}")
            os.makedirs(pd)
            for i in range(min(per, files - d * per)):
                n = d * per + i
                os.link(large if n % 10 == 0 else small,
                        os.path.join(pd, f"{n:08x}-0000-4000-8000-000000000000.jsonl"))
        p, port, wall = start(binary, os.path.join(tmp, "data"), projects)
        try:
            cpu = cpu_seconds(p.pid)
            seats = get(port, "/v1/seats")["seats"]
            rss = status(p.pid, "VmRSS")
            hwm = status(p.pid, "VmHWM")
        finally:
            stop(p)
        print(f"listing {len(seats)} session files: start to listening {wall:.2f} s "
              f"({cpu:.2f} s CPU), "
              f"RSS {rss / 1024:.1f} MiB (peak {hwm / 1024:.1f} MiB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def large_connected(binary, copies):
    tmp = tempfile.mkdtemp(prefix="sluice-cp-bench-")
    try:
        projects = os.path.join(tmp, "projects", "-work-big")
        os.makedirs(projects)
        sid = "bbbbbbbb-0000-4000-8000-000000000000"
        big = os.path.join(projects, sid + ".jsonl")
        if isinstance(copies, str):
            os.link(copies, big)
        else:
            with open(LARGE, "rb") as f:
                chunk = f.read()
            with open(big, "wb") as out:
                for _ in range(copies):
                    out.write(chunk)
        subprocess.run(["cat", big], stdout=subprocess.DEVNULL, check=True)  # warm page cache
        size = os.path.getsize(big)
        data = os.path.join(tmp, "data")
        for run in ("never seen", "index kept"):
            p, port, _ = start(binary, data, os.path.join(tmp, "projects"))
            try:
                before = status(p.pid, "VmHWM")
                wall, nbytes = first_connected(port, "c-" + sid)
                after = status(p.pid, "VmHWM")
                win = get(port, f"/v1/seats/c-{sid}")["window"]
                if run == "never seen":
                    # A file numbered from its end is counted in the background: the index (and
                    # its key) is kept once that ends; wait for it, so the next run finds it.
                    kept = index_kept_after(data, time.monotonic() - wall)
                    print(f"index kept {kept:.2f} s after the request "
                          f"(background count; peak RSS by then "
                          f"{status(p.pid, 'VmHWM') / 1024:.0f} MiB)")
            finally:
                stop(p)
            print(f"first connected, {size / 1e6:.0f} MB transcript ({run}): {wall:.2f} s, "
                  f"{nbytes / 1e6:.1f} MB event, window {win['frames']} frames "
                  f"{win['bytes'] / 1e6:.1f} MB; peak RSS {before / 1024:.0f} -> "
                  f"{after / 1024:.0f} MiB")
        t0 = time.monotonic()
        subprocess.run(["tail", "-c", str(win["bytes"]), big], stdout=subprocess.DEVNULL,
                       check=True)
        t1 = time.monotonic()
        tail = subprocess.run(["tail", "-c", str(win["bytes"]), big], capture_output=True,
                              check=True).stdout
        for line in tail.split(b"\n")[1:]:
            if line:
                json.loads(line)
        t2 = time.monotonic()
        part = os.path.join(tmp, "tail.jsonl")
        with open(part, "wb") as out:
            out.write(tail.split(b"\n", 1)[1] if b"\n" in tail else b"")
        t3 = time.monotonic()
        subprocess.run([binary, "transcript", "turns", part, "--json"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        t4 = time.monotonic()
        print(f"tail -c {win['bytes']}: {t1 - t0:.2f} s; tail -c and json.loads of each line "
              f"(Python): {t2 - t1:.2f} s; sluice transcript turns of those bytes: "
              f"{t4 - t3:.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    copies = 100
    if len(sys.argv) > 3:
        copies = sys.argv[3] if os.path.isfile(sys.argv[3]) else int(sys.argv[3])
    if files > 0:
        listing(binary, files)
    large_connected(binary, copies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
