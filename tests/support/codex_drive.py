#!/usr/bin/env python3
"""codex_drive.py: a small JSON-RPC client for `codex app-server` (JSON-RPC 2.0-style messages,
one JSON object a line, over the child's stdin/stdout), for exploring and testing codex.
Standard library only.

Usage:
  codex_drive.py --codex BIN --codex-home DIR --cwd DIR [--prompt TEXT]... [options]

It starts `BIN app-server` with CODEX_HOME=DIR, sends initialize (clientInfo,
capabilities.experimentalApi true) and the initialized notification, then thread/start (with
--cwd), or thread/resume with --resume THREAD_ID and/or --resume-path ROLLOUT, then one
turn/start for each --prompt, waiting for each turn's turn/completed. Every message is printed
on stdout as one JSON line: {"t": seconds since start, "dir": "send"|"recv", "msg": {...}}; the
last line is {"summary": {"threadId", "path", "turns": [{"id", "status", "text"}]}}.

Server requests for approval are answered by --approve, a comma-separated list of decisions
used in order, the last one for every later request:
  accept (default) | acceptForSession | decline | cancel
(item/commandExecution/requestApproval and item/fileChange/requestApproval take these as
{"decision": ...}; the legacy execCommandApproval/applyPatchApproval get "approved"/"denied"/
"abort"; item/permissions/requestApproval gets the asked permissions, or none when declining).
Other server requests get a JSON-RPC error -32601.

--interrupt-after-deltas N sends turn/interrupt {threadId, turnId} once the first turn has
streamed N item/agentMessage/delta notifications (--interrupt-after-seconds S: S seconds after its
turn/start); later turns run to their end.
--timeout bounds the whole run (default 90 s); the child is ended by its PID at the end.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from jsonrpc_stdio import Client, Timeout

APPROVALS = {
    "item/commandExecution/requestApproval",
    "item/fileChange/requestApproval",
    "item/permissions/requestApproval",
    "execCommandApproval",
    "applyPatchApproval",
}
LEGACY = {"accept": "approved", "acceptForSession": "approved_for_session",
          "decline": "denied", "cancel": "abort"}


def approval_reply(method, params, decision):
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": decision}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": LEGACY[decision]}
    # item/permissions/requestApproval: grant what was asked, or nothing.
    granted = params.get("permissions") if decision.startswith("accept") else {}
    return {"permissions": granted or {},
            "scope": "session" if decision == "acceptForSession" else "turn"}


class Driver:
    def __init__(self, client, args):
        self.c = client
        self.a = args
        self.pending = {}  # request id -> response message, once it came
        self.decisions = args.approve.split(",")
        for dec in self.decisions:
            if dec not in LEGACY:
                raise SystemExit("--approve: unknown decision " + dec)

    def handle(self, msg):
        """Answers server requests; keeps responses. Returns the message."""
        if "method" in msg and "id" in msg:  # a server request
            method, params = msg["method"], msg.get("params") or {}
            if method in APPROVALS:
                dec = self.decisions.pop(0) if len(self.decisions) > 1 else self.decisions[0]
                result = approval_reply(method, params, dec)
                self.c.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            else:
                self.c.send({"jsonrpc": "2.0", "id": msg["id"],
                             "error": {"code": -32601, "message": "not handled: " + method}})
        elif "id" in msg and ("result" in msg or "error" in msg):
            self.pending[msg["id"]] = msg
        return msg

    def call(self, method, params):
        rid = self.c.request(method, params)
        while rid not in self.pending:
            self.handle(self.c.recv())
        resp = self.pending.pop(rid)
        if "error" in resp:
            raise RuntimeError("%s failed: %s" % (method, json.dumps(resp["error"])))
        return resp["result"]

    def turn(self, thread_id, text, may_interrupt):
        res = self.call("turn/start", {"threadId": thread_id,
                                       "input": [{"type": "text", "text": text}]})
        turn_id = res["turn"]["id"]
        started = time.monotonic()
        deltas, interrupted, text_out = 0, not may_interrupt, []
        while True:
            timeout = None
            if self.a.interrupt_after_seconds is not None and not interrupted:
                timeout = max(0.0, started + self.a.interrupt_after_seconds - time.monotonic())
            msg = self.c.recv(timeout=timeout)
            if msg is None or (self.a.interrupt_after_deltas is not None and not interrupted
                               and deltas >= self.a.interrupt_after_deltas):
                interrupted = True
                self.c.request("turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
                if msg is None:
                    continue
            self.handle(msg)
            m, p = msg.get("method"), msg.get("params") or {}
            if m == "item/agentMessage/delta" and p.get("turnId") == turn_id:
                deltas += 1
                text_out.append(p.get("delta", ""))
            if m == "turn/completed" and p.get("turn", {}).get("id") == turn_id:
                return {"id": turn_id, "status": p["turn"].get("status"),
                        "text": "".join(text_out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codex", required=True)
    ap.add_argument("--codex-home", required=True)
    ap.add_argument("--cwd", required=True)
    ap.add_argument("--prompt", action="append", default=[])
    ap.add_argument("--approve", default="accept")
    ap.add_argument("--base-instructions",
                    help="thread/start baseInstructions (replaces codex's ~17 KB default prompt)")
    ap.add_argument("--resume", help="thread id to thread/resume")
    ap.add_argument("--resume-path", help="rollout file to thread/resume from")
    ap.add_argument("--interrupt-after-deltas", type=int)
    ap.add_argument("--interrupt-after-seconds", type=float)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--stderr", help="file for codex's stderr (default: discarded)")
    ap.add_argument("--config", action="append", default=[],
                    help="-c key=value passed to codex app-server")
    a = ap.parse_args()

    env = dict(os.environ, CODEX_HOME=a.codex_home)
    env.setdefault("RUST_LOG", "warn")
    argv = [a.codex, "app-server"]
    for kv in a.config:
        argv += ["-c", kv]
    err = open(a.stderr, "ab") if a.stderr else subprocess.DEVNULL
    client = Client(argv, env, sys.stdout, time.monotonic() + a.timeout, err)
    d = Driver(client, a)
    summary = {"threadId": None, "path": None, "turns": []}
    rc = 0
    try:
        d.call("initialize", {"clientInfo": {"name": "sluice_codex_drive", "title": "sluice",
                                             "version": "0.1.0"},
                              "capabilities": {"experimentalApi": True}})
        client.notify("initialized")
        if a.resume or a.resume_path:
            params = {"threadId": a.resume or "", "cwd": a.cwd}
            if a.resume_path:
                params["path"] = a.resume_path
            res = d.call("thread/resume", params)
        else:
            params = {"cwd": a.cwd}
            if a.base_instructions:
                params["baseInstructions"] = a.base_instructions
            res = d.call("thread/start", params)
        thread = res["thread"]
        summary["threadId"], summary["path"] = thread["id"], thread.get("path")
        for p in a.prompt:
            summary["turns"].append(d.turn(thread["id"], p, may_interrupt=not summary["turns"]))
        # Drain what comes right after the last turn (e.g. token usage, status changes).
        while client.recv(timeout=0.5) is not None:
            pass
    except (Timeout, EOFError, RuntimeError) as e:
        summary["error"] = str(e)
        rc = 1
    finally:
        summary["exit"] = client.close()
        print(json.dumps({"summary": summary}), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
