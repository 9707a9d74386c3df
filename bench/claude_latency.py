#!/usr/bin/env python3
"""claude_latency.py: the hub's added latency from a claude seat's stdout row to an SSE subscriber.

Usage: python3 bench/claude_latency.py SLUICE_BINARY [ROWS=500] [RATE=50]

Side by side, with the same agent and the same reader code:
  direct  bench/fanout_agent.py (a stream-json agent writing assistant rows in Claude Code's shape,
          each stamped with CLOCK_REALTIME at write time) read straight from its stdout pipe;
  hub     the same script as the `claude` agent kind's executable (`sluice serve --claude-bin`),
          one claude seat, one SSE subscriber on 127.0.0.1; each frame's stamp against its arrival.
ROWS rows paced at RATE per second (a paced turn: latency, not throughput). Prints p50/p90/p99/max
in microseconds for both. Bounded: 60 s per side; everything started is killed on exit.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "fanout_agent.py")


def stamp(text):
    # "MSG<k>;T<ns>;…"
    parts = text.split(";", 2)
    return int(parts[0][3:]), int(parts[1][1:])


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def report(name, lat_ns):
    us = [x / 1000.0 for x in lat_ns]
    print("%-7s rows=%d p50=%.0f us p90=%.0f us p99=%.0f us max=%.0f us" % (
        name, len(us), pct(us, 50), pct(us, 90), pct(us, 99), max(us)))


def direct(rows, rate):
    p = subprocess.Popen([sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    prompt = {"type": "user", "message": {"role": "user", "content": "N=%d RATE=%g" % (rows, rate)}}
    p.stdin.write((json.dumps(prompt) + "\n").encode())
    p.stdin.flush()
    lat = []
    deadline = time.time() + 60
    while len(lat) < rows and time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        now = time.time_ns()
        r = json.loads(line)
        if r.get("type") != "assistant":
            continue
        _, t = stamp(r["message"]["content"][0]["text"])
        lat.append(now - t)
    p.kill()
    p.wait()
    return lat


def http(port, method, path, body=None):
    s = socket.create_connection(("127.0.0.1", port))
    data = json.dumps(body).encode() if body is not None else b""
    s.sendall(("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\nConnection: close\r\n\r\n" % (method, path, len(data))).encode()
              + data)
    out = b""
    while b"\r\n\r\n" not in out:
        out += s.recv(65536)
    head, _, rest = out.partition(b"\r\n\r\n")
    length = 0
    for h in head.decode().split("\r\n")[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v)
    while len(rest) < length:
        rest += s.recv(65536)
    s.close()
    return json.loads(rest) if rest else None


def hub(binary, rows, rate):
    work = tempfile.mkdtemp(prefix="claude-latency-")
    fake_claude = os.path.join(work, "claude")  # takes claude's flags, ignores them
    with open(fake_claude, "w") as f:
        f.write("#!/bin/sh\nexec '%s' '%s'\n" % (sys.executable, AGENT))
    os.chmod(fake_claude, 0o755)
    srv = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--data", os.path.join(work, "data"),
         "--claude-bin", fake_claude, "--workspace-root", work],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        port = None
        for line in srv.stdout:
            line = line.decode()
            if line.startswith("listening on"):
                port = int(line.rsplit(":", 1)[1])
                break
        seat = http(port, "POST", "/v1/seats", {"agent": "claude"})["seat"]
        sub = socket.create_connection(("127.0.0.1", port))
        sub.sendall(("GET /v1/seats/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Accept: text/event-stream\r\n\r\n" % seat).encode())
        buf = b""
        while b"event: connected" not in buf:
            buf += sub.recv(65536)
        buf = b""
        http(port, "POST", "/v1/seats/%s/messages" % seat, {"text": "N=%d RATE=%g" % (rows, rate)})
        lat = []
        deadline = time.time() + 60
        sub.settimeout(5)
        while len(lat) < rows and time.time() < deadline:
            c = sub.recv(65536)
            if not c:
                break
            now = time.time_ns()
            buf += c
            while b"\n\n" in buf:
                ev, _, buf = buf.partition(b"\n\n")
                lines = ev.decode().split("\n")
                if "event: frame" not in lines:
                    continue
                data = "".join(l[6:] for l in lines if l.startswith("data: "))
                row = json.loads(data)["row"]
                if row.get("type") != "assistant":
                    continue
                _, t = stamp(row["message"]["content"][0]["text"])
                lat.append(now - t)
        sub.close()
        return lat
    finally:
        srv.terminate()
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
        subprocess.run(["rm", "-rf", work])


def main():
    binary = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 50
    report("direct", direct(rows, rate))
    report("hub", hub(binary, rows, rate))


if __name__ == "__main__":
    main()
