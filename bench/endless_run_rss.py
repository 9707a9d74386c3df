#!/usr/bin/env python3
"""`sluice run` against an endless provider stream: its peak RSS over at most 30 s (issue 11).

A loopback Anthropic-compatible server streams text deltas forever — in one content block
(`one`) or in a new block every 64 KiB (`many`) — and `sluice run --provider anthropic` reads
it with stdout going to /dev/null (a fast reader). The run must stay under 64 MiB: the assembly
limits (ASSEMBLED_BLOCK_MAX_BYTES, ASSEMBLED_MESSAGE_MAX_BYTES) end the response instead.

Usage: bench/endless_run_rss.py SLUICE_BINARY [one|many]
Bounded: loopback only, one server thread, one child (killed after 30 s), ~30 s.
"""
import http.server
import json
import os
import socketserver
import subprocess
import sys
import threading
import time

from sluice_bench import rss_kib


def sse(obj):
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()


class Endless(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "one"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        piece = "x" * 512
        try:
            self.wfile.write(sse({"type": "message_start",
                                  "message": {"id": "m", "model": "endless", "usage": {"input_tokens": 1}}}))
            index, sent = 0, 0
            self.wfile.write(sse({"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}))
            while True:
                if self.mode == "many" and sent >= 64 * 1024:
                    self.wfile.write(sse({"type": "content_block_stop", "index": index}))
                    index, sent = index + 1, 0
                    self.wfile.write(sse({"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}))
                self.wfile.write(sse({"type": "content_block_delta", "index": index,
                                      "delta": {"type": "text_delta", "text": piece}}))
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    binary = sys.argv[1]
    Endless.mode = sys.argv[2] if len(sys.argv) > 2 else "one"
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Endless)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    env = dict(os.environ, ANTHROPIC_API_KEY="k")
    start = time.time()
    child = subprocess.Popen(
        [binary, "run", "--provider", "anthropic", "--model", "endless", "--base-url",
         f"http://127.0.0.1:{port}", "go"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    peak = 0
    while child.poll() is None and time.time() - start < 30:
        peak = max(peak, rss_kib(child.pid))
        time.sleep(0.05)
    ran = time.time() - start
    if child.poll() is None:
        child.kill()
    err = child.stderr.read().strip()
    child.wait()
    print(json.dumps({"mode": Endless.mode, "seconds": round(ran, 1), "peak_rss_mib": round(peak / 1024, 1),
                      "exit": child.returncode, "stderr": err[-300:]}))
    srv.shutdown()


main()
