#!/usr/bin/env python3
"""Memory at the hub's edges (issue 11): what clients that never read cost on a heavy window.

Starts `sluice serve` (with tests/support/fake_agent.py as the agent) on loopback, fills one
seat's window to ~26 MB of frames held whole (1 MB tool results of many small blocks), then for
each scenario opens N clients that never read (SO_RCVBUF 4 KiB) and reports the hub's RSS
growth:
  sse        N SSE subscribers, the seat idle
  sse_join   N SSE subscribers joining while a turn publishes a frame every 20 ms
  ws         N WebSocket subscribers
  history    N `GET /history` requests
  oversize   a 12 MB tool result written while M SSE subscribers read promptly: peak RSS growth
             and RSS after the frame is written (the frame is held in reference form)

Usage: bench/edges_rss.py SLUICE_BINARY [N=40] [M=100]
Bounded: loopback only, one hub process per scenario (ended at exit), ~2 minutes in all.
"""
import base64
import json
import os
import socket
import sys
import threading
import time

from sluice_bench import FAKE_AGENT, Hub as BenchHub, large_anon_mappings, rss_by_mapping, rss_kib

# The hub under test (one at a time); the helpers below call it.
HUB = None
TOKEN = ""


def post(port, path, body):
    return HUB.post(path, body)


def get(port, path):
    return HUB.get(path)


def wait_turns(port, seat, turns, limit=120):
    deadline = time.time() + limit
    while time.time() < deadline:
        s = get(port, f"/v1/seats/{seat}")
        if s.get("turns", 0) >= turns and s.get("state") == "idle":
            return s
        time.sleep(0.2)
    raise RuntimeError("turns did not finish")


def start_hub(binary):
    global HUB, TOKEN
    HUB = BenchHub(binary, agent=f"python3 {FAKE_AGENT}")
    TOKEN = HUB.token
    return HUB


def heavy_seat(hub, mb=26):
    seat = post(hub.port, "/v1/seats", {"name": "heavy", "agent": "process"})["seat"]
    for i in range(mb):
        post(hub.port, f"/v1/seats/{seat}/messages", {"text": "bigmany 1000000"})
        wait_turns(hub.port, seat, i + 1)
    return seat


def stalled(port, request):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(request.encode())
    return s


def ws_request(seat):
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET /v1/seats/{seat}/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")


def scenario(binary, name, n):
    hub = start_hub(binary)
    try:
        seat = heavy_seat(hub)
        window = get(hub.port, f"/v1/seats/{seat}")["window"]["bytes"]
        time.sleep(1)
        base = rss_kib(hub.proc.pid)
        socks = []
        if name == "sse_join":
            post(hub.port, f"/v1/seats/{seat}/messages", {"text": "drip 400 20"})
            time.sleep(0.5)
        for _ in range(n):
            if name in ("sse", "sse_join"):
                req = f"GET /v1/seats/{seat}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
            elif name == "ws":
                req = ws_request(seat)
            else:
                req = f"GET /v1/seats/{seat}/history HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
            socks.append(stalled(hub.port, req))
            if name == "sse_join":
                time.sleep(0.1)  # joins spread over the turn: the window moves between them
        time.sleep(3)
        after = rss_kib(hub.proc.pid)
        for s in socks:
            s.close()
        return {"scenario": name, "clients": n, "window_bytes": window, "rss_before_kib": base,
                "rss_after_kib": after, "growth_mib": round((after - base) / 1024, 1)}
    finally:
        hub.stop()


def reader(port, seat, stop, counts):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /v1/seats/{seat}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    s.settimeout(0.5)
    while not stop.is_set():
        try:
            b = s.recv(1 << 16)
            if not b:
                break
            counts.append(len(b))
        except socket.timeout:
            pass
    s.close()


def oversize(binary, m):
    hub = start_hub(binary)
    try:
        seat = post(hub.port, "/v1/seats", {"name": "big", "agent": "process"})["seat"]
        stop = threading.Event()
        counts = []
        threads = [threading.Thread(target=reader, args=(hub.port, seat, stop, counts)) for _ in range(m)]
        for t in threads:
            t.start()
        time.sleep(2)
        base = rss_kib(hub.proc.pid)
        base_maps = rss_by_mapping(hub.proc.pid)
        peak = base
        post(hub.port, f"/v1/seats/{seat}/messages", {"text": "big 12000000"})
        deadline = time.time() + 60
        while time.time() < deadline:
            peak = max(peak, rss_kib(hub.proc.pid))
            if get(hub.port, f"/v1/seats/{seat}").get("turns", 0) >= 1 and \
                    get(hub.port, f"/v1/seats/{seat}").get("state") == "idle":
                break
            time.sleep(0.02)
        time.sleep(2)
        after = rss_kib(hub.proc.pid)
        # Where what stayed is resident ([heap]: the main arena; anon: thread arenas and mmapped
        # chunks), and (PROBE_TRIM=1) what a malloc_trim(0) run now, in the hub through gdb,
        # hands back: if it is all of it, the memory was free but kept by the allocator.
        after_maps = rss_by_mapping(hub.proc.pid)
        probe = {"large_anon_mappings_after": large_anon_mappings(hub.proc.pid)}
        if os.environ.get("PROBE_TRIM") == "1":
            import subprocess
            subprocess.run(["gdb", "-p", str(hub.proc.pid), "-batch", "-ex",
                            "call (int)malloc_trim(0)"], capture_output=True, timeout=60)
            probe["after_probe_trim_kib"] = rss_kib(hub.proc.pid)
        stop.set()
        for t in threads:
            t.join()
        return {"scenario": "oversize_12MB", "subscribers": m, "rss_before_kib": base,
                "peak_kib": peak, "peak_growth_mib": round((peak - base) / 1024, 1),
                "after_kib": after, "after_growth_mib": round((after - base) / 1024, 1),
                "bytes_read_per_subscriber": sum(counts) // max(1, m),
                "growth_by_mapping_kib": {k: after_maps[k] - base_maps[k] for k in base_maps},
                **probe}
    finally:
        hub.stop()


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    only = os.environ.get("ONLY", "sse,sse_join,ws,history,oversize").split(",")
    for name in ("sse", "sse_join", "ws", "history"):
        if name in only:
            print(json.dumps(scenario(binary, name, n)), flush=True)
    if "oversize" in only:
        print(json.dumps(oversize(binary, m)), flush=True)


main()
