#!/usr/bin/env python3
"""The search index (issue 29): index rate, hub RSS growth while indexing, query p50/p99.

Usage: bench/search_bench.py SLUICE_BINARY [MB] [FILE_MB]
  MB       size of the generated Claude Code projects tree (default 300), made of copies of a
           1 MiB real fixture transcript (each copy its own session file: the same bytes, so the
           index grows as it would with real sessions of that shape)
  FILE_MB  size of one session file (default 10: FILE_MB copies of the fixture concatenated)
Starts `sluice serve --claude-projects TREE` on loopback with a fresh data dir, polls
GET /v1/search until `indexing.complete`, samples VmRSS every 50 ms meanwhile, then times 500
queries (a mix of words, paths, commands, substrings; 2-byte scans separately).
Bounded: one server (ended at exit), temp dirs removed at exit.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_bench import pct, rss_kib, serve_projects, stop_process  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(
    HERE, "..", "..", "shared", "fixtures", "iansherr_claude-code-log",
    "test_test_data_real_projects_-src-deep-manifest_a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl")
QUERIES = ["manifest", "package.json", "git status", "ls -la", "error", "TODO", "README",
           "function", "src/", "import", "npm run", "ifest.j", "deep", "xyzzy-not-there"]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return json.load(r)


def main():
    binary = sys.argv[1]
    total_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    file_mb = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    tmp = tempfile.mkdtemp(prefix="sluice-search-bench-")
    p = None
    try:
        with open(FIXTURE, "rb") as f:
            one = f.read()
        body = one * max(1, round(file_mb * 1024 * 1024 / len(one)))
        projects = os.path.join(tmp, "projects")
        files = max(1, round(total_mb * 1024 * 1024 / len(body)))
        tree_bytes = 0
        for n in range(files):
            d = os.path.join(projects, f"-work-p{n % 20:02d}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{n:08x}-0000-4000-8000-000000000000.jsonl"), "wb") as f:
                f.write(body)
            tree_bytes += len(body)
        t0 = time.monotonic()
        p, port = serve_projects(binary, os.path.join(tmp, "data"), projects)
        rss0 = rss_kib(p.pid)
        peak = rss0
        last_poll = 0.0
        while True:
            peak = max(peak, rss_kib(p.pid))
            now = time.monotonic()
            if now - last_poll > 0.5:
                last_poll = now
                ix = get(port, "/v1/search?q=zzzz")["indexing"]
                if ix["complete"] and ix["total"] > 0:
                    break
            time.sleep(0.05)
        took = time.monotonic() - t0
        rss_end = rss_kib(p.pid)
        lat = []
        scan = []
        for i in range(500):
            q = QUERIES[i % len(QUERIES)]
            s = time.monotonic()
            get(port, "/v1/search?limit=20&q=" + urllib.parse.quote(q))
            lat.append((time.monotonic() - s) * 1000)
        for i in range(20):
            s = time.monotonic()
            get(port, "/v1/search?limit=20&q=" + urllib.parse.quote("ts"))
            scan.append((time.monotonic() - s) * 1000)
        db = sum(os.path.getsize(os.path.join(tmp, "data", n))
                 for n in os.listdir(os.path.join(tmp, "data")) if n.startswith("search.db"))
        mb = tree_bytes / 1e6
        print(f"tree: {files} session files, {mb:.0f} MB; index {db / 1e6:.0f} MB on disk")
        print(f"indexed in {took:.1f} s (start to complete): {mb / took:.1f} MB/s")
        print(f"hub RSS: {rss0 / 1024:.1f} MiB at listening, peak {peak / 1024:.1f} MiB, "
              f"{rss_end / 1024:.1f} MiB at the end: growth {(peak - rss0) / 1024:.1f} MiB")
        print(f"queries (trigram, limit 20, {len(lat)}): p50 {pct(lat, 50):.1f} ms, "
              f"p99 {pct(lat, 99):.1f} ms, max {max(lat):.1f} ms")
        print(f"queries (2-byte scan, {len(scan)}): p50 {pct(scan, 50):.1f} ms, "
              f"p99 {pct(scan, 99):.1f} ms")
    finally:
        if p is not None:
            stop_process(p)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
