#!/usr/bin/env python3
"""cluster_memory.py: what one seat's Redis stream costs against its window (issue 15).

Usage: python3 bench/cluster_memory.py SLUICE_BINARY TRANSCRIPT.jsonl [TRANSCRIPT.jsonl ...]

For each transcript: a private redis-server (unix socket, no persistence) and one
`sluice serve --redis`; a seat whose agent (bench/replay_agent.py) answers one prompt with the
transcript's rows. Reported: the window (frames, wire bytes, from the hub), the stream (XLEN,
MEMORY USAGE … SAMPLES 0: exact, every listpack counted), and, for comparison, the same entries
stored as plain JSON (the format before frames were deflated) in a second key of the same Redis.
Every process started is ended by its pid.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


class Resp:
    """A minimal RESP2 client over a unix socket (binary-safe, unlike redis-cli's output)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.s.recv(1 << 16)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return rest.decode()
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ValueError(line)

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self._reply()


def load(stored):
    if stored[:1] == b"{":
        return stored
    colon = stored.index(b":")
    return zlib.decompress(stored[colon + 1:], -15)


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def run(sluice, transcript, work):
    pids = []
    try:
        sock = os.path.join(work, "redis.sock")
        redis = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock, "--save", "",
                                  "--appendonly", "no", "--dir", work, "--logfile",
                                  os.path.join(work, "redis.log")])
        pids.append(redis.pid)
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        time.sleep(0.2)
        data = os.path.join(work, "node")
        out = open(os.path.join(work, "node.out"), "w")
        node = subprocess.Popen([sluice, "serve", "--listen", "127.0.0.1:0", "--data", data,
                                 "--no-token", "--redis", "unix://" + sock, "--agent-cmd",
                                 "python3 %s %s" % (os.path.join(HERE, "replay_agent.py"),
                                                    transcript)],
                                stdout=out, stderr=subprocess.STDOUT)
        pids.append(node.pid)
        port = None
        for _ in range(200):
            text = open(os.path.join(work, "node.out")).read()
            if "listening on http://127.0.0.1:" in text:
                port = text.split("listening on http://127.0.0.1:")[1].split()[0].strip("/")
                break
            time.sleep(0.1)
        base = "http://127.0.0.1:%s" % port
        req = urllib.request.Request(base + "/v1/seats", data=b'{"agent":"process"}',
                                     headers={"Content-Type": "application/json"})
        seat = json.load(urllib.request.urlopen(req, timeout=10))["seat"]
        req = urllib.request.Request(base + "/v1/seats/%s/messages" % seat,
                                     data=b'{"text":"replay"}',
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10)
        info = None
        for _ in range(600):
            info = get(base + "/v1/seats/" + seat)
            if info["state"] == "idle" and info["frames"] > 1:
                break
            time.sleep(0.1)
        time.sleep(1.5)  # the last publish
        info = get(base + "/v1/seats/" + seat)
        r = Resp(sock)
        key = "sluice:seat:%s:s" % seat
        xlen = r.cmd("XLEN", key)
        mem = r.cmd("MEMORY", "USAGE", key, "SAMPLES", "0")
        entries = r.cmd("XRANGE", key, "-", "+")
        stored = 0
        deflated = 0
        for eid, fields in entries:
            f = dict(zip(fields[::2], fields[1::2]))
            plain = load(f[b"f"])
            stored += len(f[b"f"])
            deflated += f[b"f"][:1] == b"z"
            r.cmd("XADD", "plain", eid, "f", plain, "o", f[b"o"])
        mem_plain = r.cmd("MEMORY", "USAGE", "plain", "SAMPLES", "0")
        w = info["window"]
        print("%s: window frames=%d wire_bytes=%d | stream entries=%d (deflated %d) stored_bytes=%d"
              " MEMORY=%d (%.2fx window) | as plain JSON: MEMORY=%d (%.2fx window)"
              % (os.path.basename(transcript)[:48], w["frames"], w["bytes"], xlen,
                 deflated, stored, mem, mem / w["bytes"], mem_plain, mem_plain / w["bytes"]))
    finally:
        for p in reversed(pids):
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(pids):
            try:
                os.waitpid(p, 0)
            except ChildProcessError:
                pass


def main():
    sluice = sys.argv[1]
    print("# %d cores, load %s, %s" % (os.cpu_count(), open("/proc/loadavg").read().split()[:3],
                                      time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    for t in sys.argv[2:]:
        work = tempfile.mkdtemp(prefix="cluster-memory-")
        try:
            run(sluice, os.path.abspath(t), work)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
