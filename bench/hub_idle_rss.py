#!/usr/bin/env python3
"""Memory per idle SSE subscriber: start `sluice serve` on loopback, open N EventSource-style
subscriptions to one seat, and report the server's RSS growth per subscriber.

Usage: bench/hub_idle_rss.py SLUICE_BINARY [N=10000]
Bounded: loopback only, one server process (ended at exit), N connections, ~1 minute.
"""
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from sluice_bench import rss_kib


async def subscribe(port, seat, ready):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /v1/seats/{seat}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    buf = b""
    while b"event: connected" not in buf:
        chunk = await reader.read(4096)
        if not chunk:
            raise RuntimeError("closed before connected")
        buf += chunk
    ready.append(1)
    return reader, writer


async def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 1000)), hard))
    data = tempfile.mkdtemp(prefix="sluice-rss-")
    proc = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--data", data, "--threads", "2", "--no-token"],
        stdout=subprocess.PIPE, text=True, preexec_fn=lambda: resource.setrlimit(
            resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard)))
    try:
        line = proc.stdout.readline()
        while "listening on" not in line:  # start-up log lines (descriptor limit) come first
            if not line:
                raise RuntimeError("the hub ended before it listened")
            line = proc.stdout.readline()
        port = int(line.strip().rsplit(":", 1)[1])
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/seats", data=b'{"name":"rss"}', method="POST",
                                     headers={"Content-Type": "application/json"})
        seat = json.load(urllib.request.urlopen(req))["seat"]
        time.sleep(0.5)
        base = rss_kib(proc.pid)
        ready = []
        conns = []
        batch = 500
        for i in range(0, n, batch):
            conns += await asyncio.gather(*(subscribe(port, seat, ready) for _ in range(min(batch, n - i))))
        await asyncio.sleep(2)
        after = rss_kib(proc.pid)
        stats = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/stats"))
        print(json.dumps({
            "subscribers": len(ready),
            "server_subscribers": stats["subscribers"],
            "rss_before_kib": base,
            "rss_after_kib": after,
            "rss_per_subscriber_bytes": round((after - base) * 1024 / max(1, len(ready))),
        }))
        for _, w in conns:
            w.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        subprocess.run(["rm", "-rf", data])


asyncio.run(main())
