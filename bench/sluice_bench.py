"""Shared helpers for the hub's Python benchmarks (bench/*_rss.py, bench/burst_join.py,
bench/soak.py): start `sluice serve` on loopback, call its API with the bearer token, read RSS,
and open SSE streams.

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


def rss_kib(pid, field="VmRSS"):
    """The process's resident set (VmRSS, or another /proc status field: RssAnon), KiB; 0 once
    it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def pct(xs, p):
    """The `p`th percentile of `xs` (nearest rank)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


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


def large_anon_mappings(pid, min_rss_kib=4096):
    """Each anonymous mapping with at least `min_rss_kib` resident, as (size KiB, resident KiB,
    permissions, the next mapping's size KiB and permissions): a thread arena's heap is a rw
    mapping followed by its reserved ---p rest (64 MiB in all); one mmapped chunk stands alone."""
    maps = []
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                maps.append([lo, hi, head[1], len(head) == 5, 0])
            elif head[0] == "Rss:":
                maps[-1][4] = int(head[1])
    out = []
    for i, (lo, hi, perms, anon, rss) in enumerate(maps):
        if anon and rss >= min_rss_kib:
            nxt = maps[i + 1] if i + 1 < len(maps) else None
            adjacent = nxt is not None and nxt[0] == hi
            out.append(((hi - lo) // 1024, rss, perms,
                        ((nxt[1] - nxt[0]) // 1024, nxt[2]) if adjacent else None))
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


def serve_projects(binary, data, projects, flag="--claude-projects"):
    """`sluice serve` without a token on 127.0.0.1:0 over the Claude Code projects tree
    `projects` (data dir `data`; `flag="--codex-sessions"`: a Codex sessions folder); returns
    (process, port) once it listens. End it with `stop_process`."""
    p = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--no-token", "--data", data,
         flag, projects],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("the hub exited")
        if line.startswith("listening on"):
            return p, int(line.rsplit(":", 1)[1])


def stop_process(p, timeout=30):
    """Ends a process this script started (SIGTERM, then SIGKILL after `timeout` s)."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


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
            got = []
            for t in page["turns"]:  # a turn's frames are seqs first, first + 1, ...
                got += range(t["first"], t["first"] + len(t["frames"]))
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
