#!/usr/bin/env python3
"""`sluice serve --codex-sessions`: the first `connected` of a large never-seen Codex rollout
(then again with its index kept), side by side with `tail -c` of the rollout bytes that hold the
window and a parse of them, and the hub's peak RSS against the window.

Usage: bench/codex_rollout.py SLUICE_BINARY [MB | ROLLOUT]
       CODEX=tools/codex/node_modules/.bin/codex bench/codex_rollout.py …   (also Codex itself)
  MB       size of the generated rollout in MB (default 200; the issue's figure is 2048): the
           real rollout tests/fixtures/codex/exec-approvals.jsonl (2 turns, 32 lines, 10 frames)
           repeated after its session meta, so its row mix is codex 0.169.0's own
  ROLLOUT  an existing rollout to use instead (hard-linked; same filesystem as the temp dir)
With CODEX set, the same rollout is also resumed by Codex itself: `codex app-server` (what the
`codex resume` TUI and the IDE extensions run) in a CODEX_HOME holding it under sessions/,
`thread/resume` by its path as a client that shows the conversation asks for it (whole history),
timed to the answer, with codex's peak RSS. No model request is made (no turn starts).
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
# The fixture's own thread (its session_meta's id): codex finds a rollout by the id in its name.
THREAD = "01a24e22-680f-77b2-b9cf-476f93998689"
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


def tree_hwm(pid):
    """Peak RSS (kB) of `pid` and its descendants (the npm `codex` wrapper runs the native
    binary as its child), as far as they still run."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            total += status(p, "VmHWM")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def codex_resume(codex, tmp, rollout):
    """Seconds until `codex app-server` answers thread/resume of `rollout` (whole history), the
    answer's bytes, and codex's peak RSS (kB) by then."""
    # The rollout lies under tmp/sessions/: tmp is the CODEX_HOME (codex resumes only rollouts
    # of its own home).
    home = tmp
    with open(os.path.join(home, "config.toml"), "w") as f:
        # The fixture's rows name their model provider "fake" (tests/fixtures/codex/README.md):
        # codex resumes a thread only while its provider is configured; nothing is requested.
        f.write('check_for_update_on_startup = false\n[analytics]\nenabled = false\n'
                '[model_providers.fake]\nname = "fake"\nbase_url = "http://127.0.0.1:9/v1"\n'
                'wire_api = "responses"\n')
    env = dict(os.environ, CODEX_HOME=home, RUST_LOG="error")
    p = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, cwd=tmp)
    try:
        def send(msg):
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()

        def answer(want):
            while True:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError("codex ended before answering")
                # `{"id":N,"result":…}`, or an error with its id last.
                if line.startswith(b'{"id":' + str(want).encode() + b",") or \
                        line.rstrip().endswith(b',"id":' + str(want).encode() + b"}"):
                    return line

        send({"id": 1, "method": "initialize", "params": {
            "clientInfo": {"name": "sluice_bench", "version": "1"},
            "capabilities": {"experimentalApi": True}}})
        answer(1)
        send({"method": "initialized"})
        hwm = tree_hwm(p.pid)
        t0 = time.monotonic()
        send({"id": 2, "method": "thread/resume",
              "params": {"threadId": "", "path": rollout, "cwd": tmp}})
        line = answer(2)
        wall = time.monotonic() - t0
        hwm = max(hwm, tree_hwm(p.pid))
        err = line.startswith(b'{"error"')
        return wall, len(line), hwm, line[:300].decode(errors="replace") if err else ""
    finally:
        p.kill()
        p.wait()


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
        codex = os.environ.get("CODEX")
        if codex:
            codex = os.path.abspath(codex)  # it runs in the temp dir
            wall, nbytes, hwm, err = codex_resume(codex, tmp, big)
            print(f"codex app-server thread/resume of the same rollout: {wall:.2f} s, "
                  f"{nbytes / 1e6:.1f} MB answer, peak RSS {hwm / 1024:.0f} MiB"
                  + (f"; it refused: {err}" if err else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
