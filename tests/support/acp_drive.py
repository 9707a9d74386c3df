#!/usr/bin/env python3
"""acp_drive.py: a small Agent Client Protocol (ACP) client, JSON-RPC 2.0 one object a line over
an agent's stdin/stdout, for exploring and testing ACP agents (e.g. `qwen --acp`). Standard
library only.

Usage:
  acp_drive.py --cwd DIR [--prompt TEXT]... [options] -- AGENT_ARGV...

It starts AGENT_ARGV, sends initialize (protocolVersion 1, clientCapabilities with fs read/write
text files, no terminal), then session/new {cwd, mcpServers: []}, or session/load {sessionId,
cwd, mcpServers: []} with --load SESSION_ID, then one session/prompt for each --prompt, waiting
for its response ({stopReason}). Every message is printed on stdout as one JSON line:
{"t": seconds since start, "dir": "send"|"recv", "msg": {...}}; the last line is
{"summary": {"sessionId", "prompts": [{"stopReason", "text"}]}}.

Agent requests:
  session/request_permission  answered by --permission, a comma-separated list used in order
                              (the last one for every later request): allow | always | reject |
                              cancel. allow/always/reject pick the first option whose kind is
                              allow_once / allow_always / reject_once (falling back to any
                              allow_* / reject_*) and answer {"outcome": {"outcome": "selected",
                              "optionId": ID}}; cancel answers {"outcome": {"outcome":
                              "cancelled"}}.
  fs/read_text_file           reads the file ({path, line?, limit?}) -> {"content"}
  fs/write_text_file          writes it ({path, content}) -> null
  anything else               a JSON-RPC error -32601.
--cancel-after-chunks N sends the session/cancel notification {sessionId} once the first prompt
has streamed N agent_message_chunk updates (--cancel-after-seconds S: S seconds after it); later
prompts run to their end.
--timeout bounds the whole run (default 90 s); the agent is ended by its PID at the end.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from jsonrpc_stdio import Client, Timeout


def pick_option(options, choice):
    want = {"allow": ["allow_once", "allow_always"], "always": ["allow_always", "allow_once"],
            "reject": ["reject_once", "reject_always"]}[choice]
    for kind in want:
        for o in options:
            if o.get("kind") == kind:
                return o.get("optionId")
    return options[0].get("optionId") if options else None


class Driver:
    def __init__(self, conn, args):
        self.c = conn
        self.a = args
        self.pending = {}
        self.choices = args.permission.split(",")

    def handle(self, msg):
        if "method" in msg and "id" in msg:
            method, p = msg["method"], msg.get("params") or {}
            try:
                result = self.answer(method, p)
            except OSError as e:
                return self.c.send({"jsonrpc": "2.0", "id": msg["id"],
                                    "error": {"code": -32603, "message": str(e)}})
            except KeyError:
                return self.c.send({"jsonrpc": "2.0", "id": msg["id"],
                                    "error": {"code": -32601, "message": "not handled: " + method}})
            self.c.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif "id" in msg and ("result" in msg or "error" in msg):
            self.pending[msg["id"]] = msg

    def answer(self, method, p):
        if method == "session/request_permission":
            choice = self.choices.pop(0) if len(self.choices) > 1 else self.choices[0]
            if choice == "cancel":
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected",
                                "optionId": pick_option(p.get("options") or [], choice)}}
        if method == "fs/read_text_file":
            with open(p["path"]) as f:
                lines = f.read().splitlines(keepends=True)
            start = max(0, (p.get("line") or 1) - 1)
            end = start + p["limit"] if p.get("limit") else len(lines)
            return {"content": "".join(lines[start:end])}
        if method == "fs/write_text_file":
            with open(p["path"], "w") as f:
                f.write(p["content"])
            return None
        raise KeyError(method)

    def call(self, method, params):
        rid = self.c.request(method, params)
        while rid not in self.pending:
            self.handle(self.c.recv())
        resp = self.pending.pop(rid)
        if "error" in resp:
            raise RuntimeError("%s failed: %s" % (method, json.dumps(resp["error"])))
        return resp["result"]

    def prompt(self, session_id, text, may_cancel):
        rid = self.c.request("session/prompt", {"sessionId": session_id,
                                                "prompt": [{"type": "text", "text": text}]})
        started = time.monotonic()
        chunks, cancelled, out = 0, not may_cancel, []
        while rid not in self.pending:
            timeout = None
            if self.a.cancel_after_seconds is not None and not cancelled:
                timeout = max(0.0, started + self.a.cancel_after_seconds - time.monotonic())
            msg = self.c.recv(timeout=timeout)
            if msg is None or (self.a.cancel_after_chunks is not None and not cancelled
                               and chunks >= self.a.cancel_after_chunks):
                cancelled = True
                self.c.notify("session/cancel", {"sessionId": session_id})
                if msg is None:
                    continue
            self.handle(msg)
            if msg.get("method") == "session/update":
                u = (msg.get("params") or {}).get("update") or {}
                if u.get("sessionUpdate") == "agent_message_chunk":
                    chunks += 1
                    content = u.get("content") or {}
                    out.append(content.get("text", ""))
        resp = self.pending.pop(rid)
        if "error" in resp:
            return {"error": resp["error"], "text": "".join(out)}
        return {"stopReason": (resp.get("result") or {}).get("stopReason"), "text": "".join(out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cwd", required=True)
    ap.add_argument("--prompt", action="append", default=[])
    ap.add_argument("--permission", default="allow")
    ap.add_argument("--load", help="session id to session/load instead of session/new")
    ap.add_argument("--cancel-after-chunks", type=int)
    ap.add_argument("--cancel-after-seconds", type=float)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--stderr", help="file for the agent's stderr (default: discarded)")
    ap.add_argument("agent", nargs="+", help="the agent's argv (after --)")
    a = ap.parse_args()
    for c in a.permission.split(","):
        if c not in ("allow", "always", "reject", "cancel"):
            raise SystemExit("--permission: unknown choice " + c)

    err = open(a.stderr, "ab") if a.stderr else subprocess.DEVNULL
    conn = Client(a.agent, dict(os.environ), sys.stdout, time.monotonic() + a.timeout, err, cwd=a.cwd)
    d = Driver(conn, a)
    summary = {"sessionId": None, "prompts": []}
    rc = 0
    try:
        init = d.call("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                                   "terminal": False},
            "clientInfo": {"name": "sluice_acp_drive", "version": "0.1.0"}})
        summary["agentCapabilities"] = init.get("agentCapabilities")
        if a.load:
            d.call("session/load", {"sessionId": a.load, "cwd": a.cwd, "mcpServers": []})
            sid = a.load
        else:
            sid = d.call("session/new", {"cwd": a.cwd, "mcpServers": []})["sessionId"]
        summary["sessionId"] = sid
        for p in a.prompt:
            summary["prompts"].append(d.prompt(sid, p, may_cancel=not summary["prompts"]))
        while conn.recv(timeout=0.5) is not None:
            pass
    except (Timeout, EOFError, RuntimeError) as e:
        summary["error"] = str(e)
        rc = 1
    finally:
        summary["exit"] = conn.close()
        print(json.dumps({"summary": summary}), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
