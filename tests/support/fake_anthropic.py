#!/usr/bin/env python3
"""fake_anthropic.py: a loopback stand-in for the Anthropic Messages API, for driving the real
`claude` CLI in tests (real HTTP/1.1, real SSE). Standard library only.

Usage: fake_anthropic.py --script FILE --record FILE [--port-file FILE]

Listens on 127.0.0.1:0, writes its port to --port-file (or prints "port N" on stdout), and
appends every request it receives to --record as one JSON line:
  {"method", "path", "body": <parsed JSON or null>}.

The script is a JSON object {"rules": [...], "delay_ms": N}. For each POST /v1/messages the
answer is the first rule whose condition holds for the request's last user message:
  {"prompt": "SUBSTR"}          its text (the person's prompt) contains SUBSTR
  {"tool_result": "SUBSTR"}     it carries a tool_result whose content contains SUBSTR
  {}                            always
A rule's "reply" is a list of blocks, streamed in order:
  {"thinking": "..."}           a thinking block (thinking_delta partials)
  {"text": "..."}               a text block (text_delta partials, a few words each)
  {"tool_use": {"name": "Bash", "input": {...}, "id"?: "toolu_..."}}
  {"error": {"status": 401, "type": "authentication_error", "message": "..."}}  (whole reply)
"delay_ms" (per rule or global) paces the partials, so a test can interrupt mid-stream.
With no rule matching, the reply is the text "echo: <last user text>". Requests that are not
streamed (stream false: title or probe calls) get the same reply as one JSON message.
"""
import argparse
import http.server
import json
import os
import sys
import threading
import time

LOCK = threading.Lock()
COUNTER = [0]


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_fake%06d" % (prefix, COUNTER[0])


def last_user(body):
    """(text, tool_result_text) of the last user message of a request body."""
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c, ""
        texts, results = [], []
        for b in c or []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                t = b.get("text", "")
                # Claude Code adds reminders as text blocks; they are not the prompt.
                if not t.startswith("<system-reminder>"):
                    texts.append(t)
            elif b.get("type") == "tool_result":
                rc = b.get("content")
                if isinstance(rc, list):
                    rc = "".join(x.get("text", "") for x in rc if isinstance(x, dict))
                results.append(str(rc))
        # The newest text is the prompt (after an interrupt Claude Code sends the earlier
        # prompt, its interruption note and the new prompt in one message).
        return (texts[-1] if texts else "", "\n".join(results))
    return "", ""


def pick(script, body):
    text, result = last_user(body)
    for rule in script.get("rules", []):
        if "prompt" in rule and (result or rule["prompt"] not in text):
            continue
        if "tool_result" in rule and (not result or rule["tool_result"] not in result):
            continue
        return rule
    return {"reply": [{"text": "echo: " + (text or result)}]}


def chunks(s, n=3):
    words = s.split(" ")
    for i in range(0, len(words), n):
        piece = " ".join(words[i:i + n])
        yield piece if i + n >= len(words) else piece + " "


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        with LOCK:
            with open(self.server.record_path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "body": body})
                        + "\n")

    def do_GET(self):
        self.record(None)
        self.send_json(200, {"data": [], "has_more": False})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        self.record(body)
        if body is None:
            return self.send_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "bad json"}})
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.send_json(200, {"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            return self.send_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "no such path"}})
        rule = pick(self.server.script, body)
        reply = rule.get("reply", [])
        for b in reply:
            if "error" in b:
                e = b["error"]
                return self.send_json(e.get("status", 500), {"type": "error", "error": {
                    "type": e.get("type", "api_error"), "message": e.get("message", "fake")}})
        delay = rule.get("delay_ms", self.server.script.get("delay_ms", 0)) / 1000.0
        model = body.get("model", "claude-fake")
        if body.get("stream"):
            self.stream(reply, model, delay)
        else:
            self.send_json(200, self.message(reply, model))

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def message(self, reply, model):
        content, stop = [], "end_turn"
        for b in reply:
            if "text" in b:
                content.append({"type": "text", "text": b["text"]})
            elif "thinking" in b:
                content.append({"type": "thinking", "thinking": b["thinking"],
                                "signature": "fake-signature"})
            elif "tool_use" in b:
                t = b["tool_use"]
                content.append({"type": "tool_use", "id": t.get("id") or next_id("toolu"),
                                "name": t["name"], "input": t.get("input", {})})
                stop = "tool_use"
        return {"id": next_id("msg"), "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}

    def stream(self, reply, model, delay):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        self.close_connection = True

        def ev(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()

        try:
            msg = self.message([], model)
            msg["stop_reason"] = None
            msg["usage"]["output_tokens"] = 1
            ev("message_start", {"type": "message_start", "message": msg})
            stop = "end_turn"
            for i, b in enumerate(reply):
                if "thinking" in b:
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                    for piece in chunks(b["thinking"]):
                        time.sleep(delay)
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                           "delta": {"type": "thinking_delta", "thinking": piece}})
                    ev("content_block_delta", {"type": "content_block_delta", "index": i,
                       "delta": {"type": "signature_delta", "signature": "fake-signature"}})
                elif "text" in b:
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "text", "text": ""}})
                    for piece in chunks(b["text"]):
                        time.sleep(delay)
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                           "delta": {"type": "text_delta", "text": piece}})
                elif "tool_use" in b:
                    t = b["tool_use"]
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use",
                                         "id": t.get("id") or next_id("toolu"),
                                         "name": t["name"], "input": {}}})
                    js = json.dumps(t.get("input", {}))
                    half = len(js) // 2
                    for piece in (js[:half], js[half:]):
                        time.sleep(delay)
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})
                    stop = "tool_use"
                else:
                    continue
                ev("content_block_stop", {"type": "content_block_stop", "index": i})
            ev("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 5}})
            ev("message_stop", {"type": "message_stop"})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an interrupt): nothing to finish


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    with open(a.script) as f:
        script = json.load(f)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.script = script
    srv.record_path = a.record
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.rename(a.port_file + ".tmp", a.port_file)
    else:
        print("port %d" % port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
