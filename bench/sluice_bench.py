"""Shared helpers for the hub's Python benchmarks (bench/*_rss.py, bench/burst_join.py,
bench/soak.py): start `sluice serve` on loopback, call its API with the bearer token, read RSS,
and read SSE streams (frames checked by seq).

Not a benchmark itself; import it from a script in bench/.
"""
import asyncio
import json
import os
import resource
import signal
import subprocess
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_AGENT = os.path.join(HERE, "..", "tests", "support", "fake_agent.py")
FANOUT_AGENT = os.path.join(HERE, "fanout_agent.py")


def rss_kib(pid):
    """The process's resident set (VmRSS), KiB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def rss_by_mapping(pid):
    """Resident KiB per kind of mapping: [heap] (the main arena), anon (thread arenas and
    mmapped chunks), files. For telling allocator retention from live memory."""
    out = {"heap": 0, "anon": 0, "file": 0}
    kind = "file"
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if not head:
                continue
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                name = head[5] if len(head) > 5 else ""
                kind = "heap" if name == "[heap]" else ("anon" if name == "" else "file")
            elif head[0] == "Rss:":
                out[kind] += int(head[1])
    return out


def raise_nofile(want):
    """Raises this process's soft RLIMIT_NOFILE to `want` (at most the hard limit); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    new = min(hard, max(soft, want))
    resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return new


def tcp_wmem():
    """net.ipv4.tcp_wmem (min, default, max) in bytes."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        return tuple(int(x) for x in f.read().split())


def tcp_rmem():
    """net.ipv4.tcp_rmem (min, default, max) in bytes."""
    with open("/proc/sys/net/ipv4/tcp_rmem") as f:
        return tuple(int(x) for x in f.read().split())


class Hub:
    """A `sluice serve` on 127.0.0.1:0 with its own data dir; `stop()` ends it (by its pid) and
    removes the dir. `agent`: the command seats with agent "process" run."""

    def __init__(self, binary, agent=None, extra=(), env=None):
        self.data = tempfile.mkdtemp(prefix="sluice-bench-")
        args = [binary, "serve", "--listen", "127.0.0.1:0", "--data", self.data, "--threads", "2"]
        if agent:
            args += ["--agent-cmd", agent]
        args += list(extra)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **(env or {})))
        line = self.proc.stdout.readline()
        while "listening on" not in line:
            if not line:
                raise RuntimeError("the hub ended before it listened")
            line = self.proc.stdout.readline()
        self.port = int(line.strip().rsplit(":", 1)[1])
        with open(os.path.join(self.data, "token")) as f:
            self.token = f.read().strip()

    @property
    def pid(self):
        return self.proc.pid

    def auth(self):
        return {"Authorization": f"Bearer {self.token}"}

    def post(self, path, body):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", **self.auth()})
        return json.load(urllib.request.urlopen(req, timeout=60))

    def get(self, path):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=self.auth())
        return json.load(urllib.request.urlopen(req, timeout=60))

    def get_text(self, path):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=self.auth())
        return urllib.request.urlopen(req, timeout=60).read().decode()

    def new_seat(self, name, agent="process"):
        return self.post("/v1/seats", {"name": name, "agent": agent})["seat"]

    def events_request(self, seat, last_event_id=None):
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        return (f"GET /v1/seats/{seat}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {self.token}\r\n{extra}\r\n")

    def metric(self, name):
        """The value of one /metrics line (its name with labels), or None."""
        for line in self.get_text("/metrics").splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return None

    def history_seqs(self, seat):
        """Every frame seq of the seat, first to last, walking GET /history back to turn 1."""
        seqs = []
        before = None
        while True:
            q = f"?before={before}" if before is not None else ""
            page = self.get(f"/v1/seats/{seat}/history{q}")
            got = [f["seq"] for t in page["turns"] for f in t["frames"]]
            seqs = got + seqs
            if page.get("cursor") is None:
                return seqs
            before = page["cursor"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        subprocess.run(["rm", "-rf", self.data])


class SseParser:
    """Splits an SSE byte stream into (event, data, id) tuples and `: comment` lines."""

    def __init__(self):
        self.buf = b""
        self.comments = []

    def feed(self, chunk):
        self.buf += chunk
        out = []
        while True:
            end = self.buf.find(b"\n\n")
            if end < 0:
                return out
            block, self.buf = self.buf[:end], self.buf[end + 2:]
            ev, data, eid = "message", [], None
            for line in block.split(b"\n"):
                if line.startswith(b":"):
                    self.comments.append(line[1:].strip().decode(errors="replace"))
                elif line.startswith(b"event: "):
                    ev = line[7:].decode()
                elif line.startswith(b"data: "):
                    data.append(line[6:])
                elif line.startswith(b"id: "):
                    eid = line[4:].decode()
            if data:
                out.append((ev, b"\n".join(data), eid))


class FrameLog:
    """What one subscriber saw of a seat's frames, by seq, across its connections: frames from
    `connected` windows and `frame` events. `lost` counts seqs skipped between what it had and
    what came next, `dup` seqs delivered twice (a resume must replay exactly the missing ones)."""

    def __init__(self):
        self.seqs = []
        self.dup = 0
        self.lost = 0
        self.last_id = None
        self.connected = 0
        self.resumed = 0

    def take(self, ev, data, eid):
        if eid:
            self.last_id = eid
        if ev == "connected":
            self.connected += 1
            d = json.loads(data)
            window = [f["seq"] for f in d["window"]["frames"]]
            # A connected window replaces what was had: frames before its first are not this
            # subscriber's loss (they are history); the ones it repeats are not duplicates.
            if self.seqs and window:
                have = set(self.seqs)
                fresh = [s for s in window if s not in have]
                self._append(fresh, gap_ok=True)
            else:
                self.seqs += window
        elif ev == "resumed":
            self.resumed += 1
        elif ev == "frame":
            seq = json.loads(data)["seq"]
            self._append([seq], gap_ok=False)

    def _append(self, seqs, gap_ok):
        for s in seqs:
            if self.seqs and s <= self.seqs[-1]:
                self.dup += 1
                continue
            if self.seqs and s != self.seqs[-1] + 1 and not gap_ok:
                self.lost += s - self.seqs[-1] - 1
            self.seqs.append(s)


async def open_sse(hub, seat, last_event_id=None, rcvbuf=None):
    """Opens an SSE subscription (raw socket, asyncio); returns (reader, writer)."""
    import socket
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", hub.port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 26)
    writer.write(hub.events_request(seat, last_event_id).encode())
    await writer.drain()
    return reader, writer


async def read_head(reader):
    """Reads the HTTP response head; returns its status code."""
    head = await reader.readuntil(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1])
