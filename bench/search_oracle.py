#!/usr/bin/env python3
"""Search over a whole projects tree with a generated multi-GiB session, against an oracle (issue 29).

Usage: bench/search_oracle.py SLUICE_BINARY [GIB]   (GIB: the generated session's size, default 2.5)

The tree: every real Claude Code session of ../shared/fixtures/iansherr_claude-code-log (read
where it is, copied into a projects layout) and one generated session of GIB GiB
(bench/gen_transcript.py: prompts, thinking, tool calls, long tool results) made of ten equal
parts with "needle" rows between them (a prompt naming a migration file and a tool call running a
command, each with a number of its own), so that rare literals have a known, small set of hits
spread through the file.

Then, against `sluice serve --claude-projects TREE` (fresh data dir, loopback):
  1. index rate: tree bytes / seconds from start until GET /v1/search says indexing is complete;
     the hub's VmRSS sampled every 50 ms meanwhile (growth = peak - RSS at listening);
  2. query latency over that index: 500 queries (limit 20), p50/p99/max;
  3. the oracle: for each literal query, the set of (seat, index) of every hit (paged with the
     cursor) equals the set of frames whose indexed text contains the literal, ASCII case ignored
     (what `grep -F -i` finds in each frame's indexed text; the indexed text computed here, in
     Python, from the issue's definition — not by sluice's code);
  4. every hit's frame (up to 5 a query), fetched by its seq (GET /v1/seats/{id}/frames/{seq},
     the seat opened first as a viewer opens it), holds the literal;
  5. a row appended to the generated session is found, timed (goal: within 1 s);
  6. a fixture session truncated to nothing loses its hits.
Exit status 1 when any oracle check fails. Bounded: one server (ended at exit), temp dir removed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_bench import pct, rss_kib, serve_projects, stop_process  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "shared", "fixtures", "iansherr_claude-code-log")
PREFIX = "test_test_data_real_projects_"
HEAD, TAIL = 8 * 1024, 4 * 1024  # SEARCH_RESULT_HEAD_BYTES, SEARCH_RESULT_TAIL_BYTES
PARTS = 10
BIG_PROJECT = "-work-big"
BIG_SESSION = "0b16b16b-0000-4000-8000-000000000001"
LATENCY_QUERIES = ["manifest", "package.json", "git status", "ls -la", "error", "TODO", "README",
                   "function", "src/", "import", "npm run", "ifest.j", "needle-0", "xyzzy-not-there"]
ORACLE_QUERIES = ["needle-03", "NEEDLE-0", "migrate_07.sql", "zebra05quux", "grep -rn needlecmd",
                  "edleCm", "/srv/app/db/", "git status", "package.json", "Recorder", "ecord",
                  "/Users/dain"]
FRAME_TYPES = ("user", "assistant", "system", "result")


def fail(msg):
    print("FAIL: " + msg)
    global FAILED
    FAILED = True


FAILED = False


# --- the indexed text, from the definition (independent of sluice's C++) -----------------

def floor_boundary(b, n):
    while n > 0 and n < len(b) and (b[n] & 0xC0) == 0x80:
        n -= 1
    return n


def ceil_boundary(b, n):
    while n < len(b) and (b[n] & 0xC0) == 0x80:
        n += 1
    return n


def head_and_tail(s):
    b = s.encode("utf-8", "surrogatepass")
    if len(b) <= HEAD + TAIL:
        return b
    return b[:floor_boundary(b, HEAD)] + " … ".encode() + b[ceil_boundary(b, len(b) - TAIL):]


def indexed_text(row):
    """The bytes a frame's hits are found in: prompts, assistant text, tool names and inputs,
    tool results (head and tail of long ones); not thinking, not meta rows."""
    out = []

    def piece(b):
        if b:
            out.append(b if isinstance(b, bytes) else b.encode("utf-8", "surrogatepass"))

    def strings(v, depth):
        if depth > 16:
            return
        if isinstance(v, str):
            piece(head_and_tail(v))
        elif isinstance(v, list):
            for e in v:
                strings(e, depth + 1)
        elif isinstance(v, dict):
            for e in v.values():
                strings(e, depth + 1)

    if row.get("type") not in ("user", "assistant") or row.get("isMeta") is True:
        return b""
    msg = row.get("message")
    if not isinstance(msg, dict) or "content" not in msg:
        return b""
    content = msg["content"]
    if isinstance(content, str):
        piece(content)
    elif isinstance(content, list):
        for blk in content:
            if not isinstance(blk, dict):
                continue
            kind = blk.get("type")
            if kind == "text":
                piece(blk.get("text") if isinstance(blk.get("text"), str) else "")
            elif kind in ("tool_use", "server_tool_use"):
                piece(blk.get("name") if isinstance(blk.get("name"), str) else "")
                if "input" in blk:
                    strings(blk["input"], 0)
            elif kind == "tool_result" and "content" in blk:
                c = blk["content"]
                if isinstance(c, str):
                    piece(head_and_tail(c))
                elif isinstance(c, list):
                    joined = "\n".join(b["text"] for b in c if isinstance(b, dict)
                                       and isinstance(b.get("text"), str) and b["text"])
                    piece(head_and_tail(joined))
    return b"\n".join(out)


def oracle(files, queries):
    """{query: {(seat, index)}} over `files` ({path: seat}): one pass over every file."""
    want = {q: set() for q in queries}
    low = {q: q.encode().lower() for q in queries}
    for path, seat in files.items():
        index = 0
        with open(path, "rb") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(row, dict) or row.get("type") not in FRAME_TYPES:
                    continue
                lowered = line.lower()
                cand = [q for q in queries if low[q] in lowered]
                if cand:
                    text = indexed_text(row).lower()
                    for q in cand:
                        if low[q] in text:
                            want[q].add((seat, index))
                index += 1
    return want


# --- the tree ---------------------------------------------------------------------------------

def needle_rows(k):
    env = {"isSidechain": False, "userType": "external", "cwd": "/work/big",
           "sessionId": BIG_SESSION, "version": "2.0.55", "gitBranch": "main"}
    prompt = {**env, "type": "user", "uuid": "needle-u%d" % k,
              "timestamp": "2026-01-02T00:00:%02d.000Z" % k,
              "message": {"role": "user", "content":
                          "needle-%02d: fix the migration in /srv/app/db/migrate_%02d.sql "
                          "(Zebra%02dQuux)" % (k, k, k)}}
    call = {**env, "type": "assistant", "uuid": "needle-a%d" % k,
            "timestamp": "2026-01-02T00:01:%02d.000Z" % k,
            "message": {"id": "msg_needle_%d" % k, "type": "message", "role": "assistant",
                        "model": "claude-opus-4-5", "stop_reason": "tool_use",
                        "content": [{"type": "tool_use", "id": "toolu_needle_%d" % k,
                                     "name": "Bash",
                                     "input": {"command": "grep -rn NeedleCmd%02d src/" % k}}]}}
    return (json.dumps(prompt) + "\n" + json.dumps(call) + "\n").encode()


def build_tree(root, gib):
    projects = os.path.join(root, "projects")
    files = {}
    for name in sorted(os.listdir(FIXTURES)):
        if not name.startswith(PREFIX) or not name.endswith(".jsonl"):
            continue
        rest = name[len(PREFIX):-len(".jsonl")]
        m = re.match(r"^(-.+)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", rest)
        if not m:
            continue
        d = os.path.join(projects, m.group(1))
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, m.group(2) + ".jsonl")
        shutil.copyfile(os.path.join(FIXTURES, name), dst)
        files[dst] = "c-" + m.group(2)
    part = os.path.join(root, "part.jsonl")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_transcript.py"), part,
                    str(gib / PARTS)], check=True)
    d = os.path.join(projects, BIG_PROJECT)
    os.makedirs(d, exist_ok=True)
    big = os.path.join(d, BIG_SESSION + ".jsonl")
    with open(part, "rb") as src, open(big, "wb") as out:
        for k in range(PARTS):
            src.seek(0)
            shutil.copyfileobj(src, out, 1 << 22)
            out.write(needle_rows(k))
    os.remove(part)
    files[big] = "c-" + BIG_SESSION
    return projects, files, big


# --- the hub ----------------------------------------------------------------------------------

def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, None


def all_hits(port, q):
    out, raw, cursor = set(), [], None
    for _ in range(1000):
        path = "/v1/search?limit=200&q=" + urllib.parse.quote(q)
        if cursor:
            path += "&cursor=" + urllib.parse.quote(cursor)
        status, r = get(port, path)
        if status != 200:
            fail(f"{q!r}: search answered {status}")
            break
        for h in r["hits"]:
            key = (h["seat"], h["index"])
            if key in out:
                fail(f"{q!r}: a hit twice: {key}")
            out.add(key)
            raw.append(h)
        cursor = r.get("next_cursor")
        if not cursor:
            break
    return out, raw


def seq_of(port, q, h):
    if h["seq"] is not None:
        return h["seq"]
    until = time.monotonic() + 120
    while time.monotonic() < until:
        get(port, f"/v1/seats/{h['seat']}/history?turns=1")  # opens it, as a viewer does
        _, r = get(port, f"/v1/search?limit=200&seat={h['seat']}&q=" + urllib.parse.quote(q))
        for x in (r or {}).get("hits", []):
            if x["index"] == h["index"] and x["seq"] is not None:
                return x["seq"]
        time.sleep(0.25)
    return None


def frame(port, seat, seq):
    for _ in range(2400):
        status, row = get(port, f"/v1/seats/{seat}/frames/{seq}")
        if status != 503:
            return status, row
        time.sleep(0.05)
    return 503, None


def main():
    binary = sys.argv[1]
    gib = float(sys.argv[2]) if len(sys.argv) > 2 else 2.5
    tmp = tempfile.mkdtemp(prefix="sluice-search-oracle-")
    p = None
    try:
        t = time.monotonic()
        projects, files, big = build_tree(tmp, gib)
        tree = sum(os.path.getsize(f) for f in files)
        print(f"tree: {len(files)} sessions, {tree / 1e6:.0f} MB "
              f"(generated {os.path.getsize(big) / 1e6:.0f} MB) in {time.monotonic() - t:.0f} s")
        t0 = time.monotonic()
        p, port = serve_projects(binary, os.path.join(tmp, "data"), projects)
        rss0 = peak = rss_kib(p.pid)
        samples = []
        last_poll = 0.0
        while True:
            r = rss_kib(p.pid)
            peak = max(peak, r)
            now = time.monotonic()
            samples.append((now - t0, r))
            if now - last_poll > 0.5:
                last_poll = now
                _, s = get(port, "/v1/search?q=zzzz")
                ix = s["indexing"]
                if ix["complete"] and ix["total"] > 0:
                    break
            time.sleep(0.05)
        took = time.monotonic() - t0
        db = sum(os.path.getsize(os.path.join(tmp, "data", n))
                 for n in os.listdir(os.path.join(tmp, "data")) if n.startswith("search.db"))
        print(f"indexed {tree / 1e6:.0f} MB in {took:.1f} s: {tree / 1e6 / took:.1f} MB/s; "
              f"index {db / 1e6:.0f} MB on disk")
        quarter = [max(r for s, r in samples if lo <= s / took < lo + 0.25) / 1024
                   for lo in (0, 0.25, 0.5, 0.75)]
        print(f"hub RSS: {rss0 / 1024:.1f} MiB at listening, peak {peak / 1024:.1f} MiB "
              f"(growth {(peak - rss0) / 1024:.1f} MiB); peak per quarter of the run: "
              + ", ".join(f"{x:.1f}" for x in quarter) + " MiB")
        lat = []
        for i in range(500):
            q = LATENCY_QUERIES[i % len(LATENCY_QUERIES)]
            s = time.monotonic()
            get(port, "/v1/search?limit=20&q=" + urllib.parse.quote(q))
            lat.append((time.monotonic() - s) * 1000)
        print(f"queries (limit 20, {len(lat)}): p50 {pct(lat, 50):.1f} ms, "
              f"p99 {pct(lat, 99):.1f} ms, max {max(lat):.1f} ms")

        t = time.monotonic()
        want = oracle(files, ORACLE_QUERIES)
        print(f"oracle over {tree / 1e6:.0f} MB in {time.monotonic() - t:.0f} s")
        for q in ORACLE_QUERIES:
            got, raw = all_hits(port, q)
            ok = got == want[q]
            if not ok:
                fail(f"{q!r}: {len(got)} hits, the oracle {len(want[q])}; "
                     f"missing {sorted(want[q] - got)[:5]}, extra {sorted(got - want[q])[:5]}")
            checked = 0
            for h in raw[:5]:
                seq = seq_of(port, q, h)
                if seq is None:
                    fail(f"{q!r}: no seq for {h['seat']} {h['index']}")
                    continue
                status, row = frame(port, h["seat"], seq)
                if status != 200 or q.encode().lower() not in indexed_text(row).lower():
                    fail(f"{q!r}: frame {h['seat']} {seq} ({status}) does not hold it")
                else:
                    checked += 1
            print(f"  {q!r}: {len(got)} hits, oracle {len(want[q])}: "
                  f"{'equal' if ok else 'DIFFERENT'}; {checked} frames fetched by seq hold it")

        # A row a live writer appends to the big session: found within how long.
        with open(big, "ab") as out:
            out.write(needle_rows(99).replace(b"needle-99", b"freshly-appended-77"))
        t = time.monotonic()
        found = None
        while time.monotonic() - t < 30:
            _, r = get(port, "/v1/search?q=freshly-appended-77")
            if r and r["hits"]:
                found = time.monotonic() - t
                break
            time.sleep(0.02)
        if found is None or found > 1.0:
            fail(f"an appended row was found after {found} s (goal: 1 s)")
        print(f"appended row found after {found * 1000 if found else -1:.0f} ms")

        # A session truncated to nothing: its hits go.
        victim = next(f for f, s in files.items() if "7acd37a8" in s)
        seat = files[victim]
        before = len(all_hits(port, "Recorder")[0])
        open(victim, "wb").close()
        t = time.monotonic()
        gone = False
        while time.monotonic() - t < 30:
            _, r = get(port, f"/v1/search?limit=200&seat={seat}&q=Recorder")
            if r is not None and not r["hits"]:
                gone = True
                break
            time.sleep(0.1)
        if not gone:
            fail("a truncated session's hits stayed")
        after = len(all_hits(port, "Recorder")[0])
        print(f"truncated {seat}: 'Recorder' hits {before} -> {after}, "
              f"its own gone: {gone} ({time.monotonic() - t:.1f} s)")
    finally:
        if p is not None:
            stop_process(p)
        shutil.rmtree(tmp, ignore_errors=True)
    print("oracle: " + ("FAILED" if FAILED else "all equal"))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
