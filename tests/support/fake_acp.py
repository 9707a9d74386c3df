#!/usr/bin/env python3
"""fake_acp.py: a stand-in ACP agent (Agent Client Protocol version 1, JSON-RPC 2.0 lines on
stdio, the message shapes Qwen Code 0.24.4 sends: tests/fixtures/acp) for the acp agent's unit
tests: the cases a real agent cannot be made to produce on demand. Standard library only.

Environment:
  FAKE_ACP_LOG=FILE        append every message received, one JSON line each
  FAKE_ACP_SESSIONS=FILE   sessions this agent knows (one id per line; new ones are added);
                           session/load of another id fails (-32002 "session not found")
  FAKE_ACP_NO_LOAD=1       agentCapabilities.loadSession false
  FAKE_ACP_VERSION=N       the protocolVersion initialize answers (default 1)
  FAKE_ACP_NO_INIT=1       never answer initialize

A prompt answers by its text:
  "tool"          an execute tool_call (ls), then its completed update with output "a\\nb"
  "ask"           a session/request_permission for `rm -rf x` (options proceed/cancel); the
                  text then says "outcome: <optionId>" or "outcome: cancelled"
  "edit"          an edit tool_call with one diff, completed
  "plan"          a plan update with three entries
  "read PATH"     fs/read_text_file of PATH (line 2, limit 1 when "read2 PATH"); the text says
                  "read: <content>" or "read error: <message>"
  "write PATH"    fs/write_text_file of PATH with "written by fake"; "write ok" or the error
  "terminal"      terminal/create; the text says the error it got
  "slow"          a chunk every 100 ms (100 of them); session/cancel ends it "cancelled"
  "deaf"          chunks, then nothing: session/cancel is ignored and the prompt never ends
  "exit"          exits with status 3, after "fatal: the fake was asked to exit" on stderr
  "garbage"       writes a line that is not JSON
  "refuse"        answers the prompt with a JSON-RPC error
  otherwise       a thought, then "echo: <prompt> (prompts: N)" in three chunks, usage in the
                  last one's _meta; N counts this session's prompts (loaded ones included)
"""
import json
import os
import sys
import threading
import time
import uuid

OUT_LOCK = threading.Lock()
NEXT_ID = [1000]
PENDING = {}  # our request id -> (event, [reply])
SESSION = {"id": None, "prompts": 0}
CANCELLED = threading.Event()


def send(msg):
    msg["jsonrpc"] = "2.0"
    with OUT_LOCK:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def note(msg):
    log = os.environ.get("FAKE_ACP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(msg) + "\n")


def update(u):
    send({"method": "session/update", "params": {"sessionId": SESSION["id"], "update": u}})


def chunk(text, kind="agent_message_chunk", meta=None):
    u = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if meta:
        u["_meta"] = meta
    update(u)


def ask(method, params):
    NEXT_ID[0] += 1
    rid = NEXT_ID[0]
    ev = threading.Event()
    PENDING[rid] = (ev, [])
    send({"id": rid, "method": method, "params": params})
    ev.wait(60)
    return PENDING.pop(rid)[1][0] if PENDING.get(rid, (None, []))[1] else None


def sessions_file():
    return os.environ.get("FAKE_ACP_SESSIONS")


def known_sessions():
    f = sessions_file()
    if not f or not os.path.exists(f):
        return []
    with open(f) as fh:
        return [l.split()[0] for l in fh if l.strip()]


def remember(sid, prompts):
    f = sessions_file()
    if f:
        with open(f, "a") as fh:
            fh.write("%s %d\n" % (sid, prompts))


def prompts_of(sid):
    f = sessions_file()
    n = 0
    if f and os.path.exists(f):
        with open(f) as fh:
            for l in fh:
                parts = l.split()
                if parts and parts[0] == sid:
                    n = int(parts[1])
    return n


def run_prompt(rid, text):
    CANCELLED.clear()
    SESSION["prompts"] += 1
    remember(SESSION["id"], SESSION["prompts"])
    sid = SESSION["id"]
    if text == "exit":
        sys.stderr.write("fatal: the fake was asked to exit\n")
        sys.stderr.flush()
        os._exit(3)
    if text == "garbage":
        with OUT_LOCK:
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        return
    if text == "refuse":
        send({"id": rid, "error": {"code": -32603, "message": "the fake refuses"}})
        return
    if text == "tool":
        update({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "ls", "kind": "execute",
                "status": "in_progress", "rawInput": {"command": "ls", "description": "list"}})
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "a\nb"}}]})
        chunk("listed")
    elif text == "ask":
        reply = ask("session/request_permission", {
            "sessionId": sid,
            "options": [{"optionId": "proceed", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "always", "name": "Always", "kind": "allow_always"},
                        {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}],
            "toolCall": {"toolCallId": "call_ask", "status": "pending", "title": "rm -rf x",
                         "kind": "execute", "rawInput": {"command": "rm -rf x"},
                         "content": [{"type": "content",
                                      "content": {"type": "text", "text": "it deletes x"}}]}})
        outcome = ((reply or {}).get("result") or {}).get("outcome") or {}
        chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else "cancelled"
        if CANCELLED.is_set():
            send({"id": rid, "result": {"stopReason": "cancelled"}})
            return
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call_ask",
                "status": "completed" if chosen == "proceed" else "failed",
                "content": [{"type": "content", "content": {"type": "text", "text": "outcome " + chosen}}]})
        chunk("outcome: " + chosen)
    elif text == "edit":
        update({"sessionUpdate": "tool_call", "toolCallId": "call_e", "title": "Edit f.txt", "kind": "edit",
                "status": "completed",
                "content": [{"type": "diff", "path": "/w/f.txt", "oldText": "old\n", "newText": "new\n"}]})
        chunk("edited")
    elif text == "plan":
        update({"sessionUpdate": "plan", "entries": [
            {"content": "one", "priority": "high", "status": "completed"},
            {"content": "two", "priority": "medium", "status": "in_progress"},
            {"content": "three", "priority": "low", "status": "pending"}]})
        chunk("planned")
    elif text.startswith("read") or text.startswith("write "):
        verb, path = text.split(" ", 1)
        if verb == "write":
            r = ask("fs/write_text_file", {"sessionId": sid, "path": path, "content": "written by fake"})
            chunk("write ok" if r and "result" in r else "write error: " + r["error"]["message"])
        else:
            p = {"sessionId": sid, "path": path}
            if verb == "read2":
                p.update({"line": 2, "limit": 1})
            r = ask("fs/read_text_file", p)
            chunk("read: " + r["result"]["content"] if r and "result" in r
                  else "read error: " + r["error"]["message"])
    elif text == "terminal":
        r = ask("terminal/create", {"sessionId": sid, "command": "ls"})
        chunk("terminal error: " + r["error"]["message"] if r and "error" in r else "terminal ok")
    elif text in ("slow", "deaf"):
        for i in range(100):
            if CANCELLED.is_set():
                if text == "slow":
                    send({"id": rid, "result": {"stopReason": "cancelled"}})
                return
            chunk("w%d " % i)
            time.sleep(0.1)
    else:
        chunk("pondering", kind="agent_thought_chunk")
        chunk("echo: ")
        chunk(text + " ")
        chunk("(prompts: %d)" % SESSION["prompts"],
              meta={"usage": {"inputTokens": 20, "outputTokens": 10, "cachedReadTokens": 5}})
    send({"id": rid, "result": {"stopReason": "end_turn"}})


def handle(msg):
    method = msg.get("method")
    rid = msg.get("id")
    p = msg.get("params") or {}
    if method is None:  # a reply to one of ours
        if rid in PENDING:
            PENDING[rid][1].append(msg)
            PENDING[rid][0].set()
        return
    if method == "initialize":
        if os.environ.get("FAKE_ACP_NO_INIT"):
            return
        send({"id": rid, "result": {
            "protocolVersion": int(os.environ.get("FAKE_ACP_VERSION", "1")),
            "agentInfo": {"name": "fake-acp", "title": "Fake ACP", "version": "0.0.1"},
            "agentCapabilities": {"loadSession": not os.environ.get("FAKE_ACP_NO_LOAD")}}})
    elif method == "session/new":
        SESSION["id"] = "sess-" + uuid.uuid4().hex[:8]
        SESSION["prompts"] = 0
        remember(SESSION["id"], 0)
        send({"id": rid, "result": {"sessionId": SESSION["id"],
                                    "modes": {"currentModeId": "default", "availableModes": []}}})
    elif method == "session/load":
        sid = p.get("sessionId")
        if sid not in known_sessions():
            send({"id": rid, "error": {"code": -32002, "message": "session not found: %s" % sid}})
            return
        SESSION["id"] = sid
        SESSION["prompts"] = prompts_of(sid)
        update({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "old prompt"}})
        chunk("old answer")
        send({"id": rid, "result": {}})
    elif method == "session/prompt":
        text = "".join(b.get("text", "") for b in p.get("prompt", []) if b.get("type") == "text")
        threading.Thread(target=run_prompt, args=(rid, text), daemon=True).start()
    elif method == "session/cancel":
        CANCELLED.set()
    elif rid is not None:
        send({"id": rid, "error": {"code": -32601, "message": "unknown method " + method}})


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        note(msg)
        handle(msg)


if __name__ == "__main__":
    main()
