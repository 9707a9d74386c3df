#!/usr/bin/env python3
"""fake_responses.py: a loopback stand-in for the OpenAI Responses API, for driving the real
`codex` CLI (codex app-server) and other Responses clients in tests (real HTTP/1.1, real SSE).
Standard library only.

Usage: fake_responses.py [--record FILE] [--port-file FILE] [--delay-ms N]

Listens on 127.0.0.1:0, writes its port to --port-file (or prints "port N" on stdout). With
--record (or the environment variable FAKE_RESPONSES_RECORD naming a file) it appends every
request it receives to that file as one JSON line:
  {"method", "path", "body": <parsed JSON or null>}.

POST /v1/responses (any path ending in /responses) answers by the newest input item:
  a function_call_output            text "tool output: <the output>" (after a "run:" call)
and otherwise by the text of the last user prompt (the last text part of the last user message
that is not context: codex's <environment_context>-style messages, qwen-code's
<system-reminder> parts):
  contains "garbage"                a response.created, then an event whose data is not JSON
  contains "fail"                   a response.failed event (error code "server_error")
  contains "slow"                   200 text deltas, one per 100 ms, so a test can interrupt
  contains "think"                  a reasoning item (summary deltas) before the text
  "run:CMD" (to the end of the line) a function call to the shell tool the request offers
                                    (codex 0.169: exec_command {"cmd"}; qwen-code:
                                    run_shell_command {"command"}), asking for escalated
                                    permissions (sandbox_permissions "require_escalated") so
                                    that codex asks for approval under approval_policy
                                    "on-request"
  "runbox:CMD"                      the same call without escalation: codex runs it in its
                                    sandbox without asking
  anything else                     "echo: <prompt> (user prompts: N; first: <first prompt>)"
N counts the prompts in the request, so a resumed thread's second prompt shows it saw the first.
Requests with "stream": false get the same reply as one JSON response object.

GET .../models answers {"models": [], "data": [], "object": "list"}; other paths 404.
--delay-ms paces the partials of every reply (default 0; "slow" uses at least 100).
"""
import argparse
import http.server
import json
import os
import re
import sys
import threading
import time

LOCK = threading.Lock()
COUNTER = [0]

# The context that agents send with role "user" besides the person's prompt: codex's own
# messages, and qwen-code's <system-reminder> parts (in the same message as the prompt).
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<permissions",
                    "# AGENTS.md", "<user_shell_command>", "<turn_aborted>", "<skills",
                    "<collaboration_mode>", "<apps_instructions>", "<personality",
                    "<system-reminder>")


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_fake%06d" % (prefix, COUNTER[0])


def item_text(item):
    """The text of a message item: its last text part that is not context, or ""."""
    c = item.get("content")
    if isinstance(c, str):
        c = [{"type": "input_text", "text": c}]
    parts = []
    for p in c or []:
        if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text"):
            t = p.get("text", "")
            if not t.lstrip().startswith(CONTEXT_PREFIXES):
                parts.append(t)
    return parts[-1] if parts else ""


def prompts(body):
    """The person's prompts in a request's input, oldest first."""
    out = []
    inp = body.get("input")
    if isinstance(inp, str):
        return [inp]
    for it in inp or []:
        if not isinstance(it, dict) or it.get("role") != "user":
            continue
        if it.get("type", "message") != "message":
            continue
        t = item_text(it)
        if t:
            out.append(t)
    return out


def last_tool_output(body):
    """The output of the newest input item if it is a function_call_output, else None."""
    inp = body.get("input")
    if not isinstance(inp, list) or not inp:
        return None
    last = inp[-1]
    if not isinstance(last, dict) or last.get("type") not in (
            "function_call_output", "custom_tool_call_output"):
        return None
    out = last.get("output")
    if isinstance(out, list):
        out = "".join(p.get("text", "") for p in out if isinstance(p, dict))
    elif isinstance(out, dict):
        out = out.get("content") or json.dumps(out)
    return str(out)


def shell_call(body, cmd, escalate=True):
    """(tool name, arguments) calling the shell tool that the request's tools list offers."""
    names = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    esc = {"sandbox_permissions": "require_escalated",
           "justification": "the test asks to run this command"} if escalate else {}
    if "exec_command" in names:
        return "exec_command", dict({"cmd": cmd}, **esc)
    if "shell_command" in names:
        return "shell_command", dict({"command": cmd}, **esc)
    if "shell" in names:
        return "shell", dict({"command": ["bash", "-lc", cmd]}, **esc)
    if "run_shell_command" in names:  # qwen-code
        return "run_shell_command", {"command": cmd, "description": "run " + cmd}
    return (names[0] if names else "shell"), {"command": cmd}


def plan(body):
    """The reply to a request: a dict {"items": [...], "garbage"?, "fail"?, "delay"?}."""
    out = last_tool_output(body)
    ps = prompts(body)
    text = ps[-1] if ps else ""
    if out is not None:
        return {"items": [{"text": "tool output: " + out.strip()}]}
    if "garbage" in text:
        return {"garbage": True, "items": []}
    if "fail" in text:
        return {"fail": True, "items": []}
    if "slow" in text:
        return {"items": [{"text": " ".join("w%d" % i for i in range(200)), "per": 1}],
                "delay": 0.1}
    m = re.search(r"(runbox|run):(.+)", text)
    if m:
        name, args = shell_call(body, m.group(2).strip(), escalate=m.group(1) == "run")
        return {"items": [{"call": {"name": name, "arguments": args}}]}
    items = []
    if "think" in text:
        items.append({"reasoning": "The person asked me to think about: " + text})
    items.append({"text": "echo: %s (user prompts: %d; first: %s)"
                  % (text, len(ps), ps[0] if ps else "")})
    return {"items": items}


def chunks(s, n=3):
    words = s.split(" ")
    for i in range(0, len(words), n):
        piece = " ".join(words[i:i + n])
        yield piece if i + n >= len(words) else piece + " "


def usage(body, out_text):
    inp = len(json.dumps(body.get("input", ""))) // 4
    out = max(1, len(out_text) // 4)
    return {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        path = self.server.record_path
        if not path:
            return
        with LOCK:
            with open(path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "body": body})
                        + "\n")

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record(None)
        if self.path.split("?")[0].endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [], "models": []})
        self.send_json(404, {"error": {"message": "no such path", "type": "invalid_request_error",
                                       "code": "not_found"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        self.record(body)
        if body is None:
            return self.send_json(400, {"error": {"message": "bad json",
                                                  "type": "invalid_request_error"}})
        if not self.path.split("?")[0].endswith("/responses"):
            return self.send_json(404, {"error": {"message": "no such path",
                                                  "type": "invalid_request_error",
                                                  "code": "not_found"}})
        self._resp_id = next_id("resp")
        p = plan(body)
        delay = max(p.get("delay", 0), self.server.delay)
        if body.get("stream", False):
            self.stream(body, p, delay)
        else:
            resp = self.response(body, "completed")
            resp["output"] = [self.output_item(it, "completed")[0] for it in p["items"]]
            resp["usage"] = usage(body, json.dumps(resp["output"]))
            self.send_json(200, resp)

    def response(self, body, status):
        return {"id": self.resp_id, "object": "response", "created_at": int(time.time()),
                "status": status, "model": body.get("model", "gpt-fake"), "output": [],
                "usage": None, "error": None}

    def output_item(self, it, status):
        """(Responses output item, its streamed text) for one planned item."""
        if "text" in it:
            return ({"id": next_id("msg"), "type": "message", "status": status,
                     "role": "assistant",
                     "content": [{"type": "output_text", "text": it["text"],
                                  "annotations": []}]}, it["text"])
        if "reasoning" in it:
            return ({"id": next_id("rs"), "type": "reasoning",
                     "summary": [{"type": "summary_text", "text": it["reasoning"]}]},
                    it["reasoning"])
        c = it["call"]
        args = json.dumps(c["arguments"])
        return ({"id": next_id("fc"), "type": "function_call", "status": status,
                 "call_id": next_id("call"), "name": c["name"], "arguments": args}, args)

    def stream(self, body, p, delay):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("x-request-id", next_id("req"))
        self.end_headers()
        self.close_connection = True
        seq = [0]

        def ev(name, data):
            data = dict({"type": name, "sequence_number": seq[0]}, **data)
            seq[0] += 1
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()

        try:
            ev("response.created", {"response": self.response(body, "in_progress")})
            if p.get("garbage"):
                self.wfile.write(b"event: response.output_item.added\ndata: {not json at all\n\n")
                self.wfile.flush()
                return
            if p.get("fail"):
                r = self.response(body, "failed")
                r["error"] = {"code": "server_error", "message": "the fake was asked to fail"}
                ev("response.failed", {"response": r})
                return
            done, all_text = [], ""
            for idx, it in enumerate(p["items"]):
                item, text = self.output_item(it, "completed")
                all_text += text
                started = dict(item, status="in_progress")
                if item["type"] == "message":
                    started["content"] = []
                elif item["type"] == "reasoning":
                    started["summary"] = []
                elif item["type"] == "function_call":
                    started["arguments"] = ""
                ev("response.output_item.added", {"output_index": idx, "item": started})
                iid = item["id"]
                if item["type"] == "message":
                    part = {"type": "output_text", "text": "", "annotations": []}
                    ev("response.content_part.added", {"item_id": iid, "output_index": idx,
                                                       "content_index": 0, "part": part})
                    for piece in chunks(text, it.get("per", 3)):
                        time.sleep(delay)
                        ev("response.output_text.delta", {"item_id": iid, "output_index": idx,
                                                          "content_index": 0, "delta": piece})
                    ev("response.output_text.done", {"item_id": iid, "output_index": idx,
                                                     "content_index": 0, "text": text})
                    ev("response.content_part.done", {"item_id": iid, "output_index": idx,
                                                      "content_index": 0,
                                                      "part": item["content"][0]})
                elif item["type"] == "reasoning":
                    part = {"type": "summary_text", "text": ""}
                    ev("response.reasoning_summary_part.added",
                       {"item_id": iid, "output_index": idx, "summary_index": 0, "part": part})
                    for piece in chunks(text):
                        time.sleep(delay)
                        ev("response.reasoning_summary_text.delta",
                           {"item_id": iid, "output_index": idx, "summary_index": 0,
                            "delta": piece})
                    ev("response.reasoning_summary_text.done",
                       {"item_id": iid, "output_index": idx, "summary_index": 0, "text": text})
                    ev("response.reasoning_summary_part.done",
                       {"item_id": iid, "output_index": idx, "summary_index": 0,
                        "part": item["summary"][0]})
                else:
                    half = len(text) // 2
                    for piece in (text[:half], text[half:]):
                        time.sleep(delay)
                        ev("response.function_call_arguments.delta",
                           {"item_id": iid, "output_index": idx, "delta": piece})
                    ev("response.function_call_arguments.done",
                       {"item_id": iid, "output_index": idx, "arguments": text})
                ev("response.output_item.done", {"output_index": idx, "item": item})
                done.append(item)
            r = self.response(body, "completed")
            r["output"] = done
            r["usage"] = usage(body, all_text)
            ev("response.completed", {"response": r})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an interrupt): nothing to finish

    @property
    def resp_id(self):
        return getattr(self, "_resp_id", "resp_fake")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", default=os.environ.get("FAKE_RESPONSES_RECORD"))
    ap.add_argument("--port-file")
    ap.add_argument("--delay-ms", type=int, default=0)
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.record_path = a.record
    srv.delay = a.delay_ms / 1000.0
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
