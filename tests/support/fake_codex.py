#!/usr/bin/env python3
"""fake_codex.py: a stand-in for `codex app-server` (JSON-RPC lines on stdio, codex 0.169's
message shapes as observed in /work/notes and tests/fixtures/codex) for the codex agent's unit
tests: the cases the real CLI cannot be made to produce on demand. Standard library only.

Usage: fake_codex.py app-server   (the agent passes "app-server"; anything else exits 2)

Environment:
  FAKE_CODEX_LOG=FILE       append every message received, one JSON line each
  FAKE_CODEX_NO_INIT=1      never answer `initialize`
  FAKE_CODEX_THREADS=FILE   threads this "home" knows (one id per line); thread/resume of
                            another id fails as codex does (-32600 "no rollout found …")

A turn answers by its prompt:
  "patch"        a fileChange item asking approval (item/fileChange/requestApproval); accepted:
                 completed, declined: declined
  "plan"         a turn/plan/updated, then the answer
  "ask"          a server request sluice does not serve (item/tool/requestUserInput); the answer
                 then says what came back
  "deaf"         deltas, then nothing: an interrupt is answered but the turn never completes
  "withdraw"     a command approval, then serverRequest/resolved for it (codex took it back),
                 then the turn completes
  "longline"     one line of 4 MiB (for a small max_line_bytes)
  "exit"         exits with status 3, after "fatal: the fake was asked to exit" on stderr
  otherwise      "echo: <prompt>" as three deltas
"""
import json
import os
import sys
import threading
import time

OUT_LOCK = threading.Lock()
NEXT_SERVER_ID = [0]
PENDING = {}  # server request id -> (event, [reply])
THREAD = {"id": None}
TURN = {"id": None, "interrupted": threading.Event()}
COUNTER = [0]


def send(msg):
    with OUT_LOCK:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def note(msg):
    log = os.environ.get("FAKE_CODEX_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(msg) + "\n")


def new_id(prefix):
    COUNTER[0] += 1
    return "%s-%04d" % (prefix, COUNTER[0])


def notify(method, params):
    send({"method": method, "params": params, "emittedAtMs": int(time.time() * 1000)})


def ask(method, params):
    rid = NEXT_SERVER_ID[0]
    NEXT_SERVER_ID[0] += 1
    ev = threading.Event()
    PENDING[rid] = (ev, [None])
    send({"method": method, "id": rid, "params": params})
    return rid, ev


def reply_of(rid):
    return PENDING[rid][1][0]


def usage():
    notify("thread/tokenUsage/updated", {
        "threadId": THREAD["id"], "turnId": TURN["id"],
        "tokenUsage": {
            "total": {"totalTokens": 30, "inputTokens": 20, "cachedInputTokens": 5,
                      "outputTokens": 10, "reasoningOutputTokens": 0},
            "last": {"totalTokens": 30, "inputTokens": 20, "cachedInputTokens": 5,
                     "outputTokens": 10, "reasoningOutputTokens": 0},
            "modelContextWindow": 1000}})


def answer(text):
    item = new_id("msg")
    base = {"threadId": THREAD["id"], "turnId": TURN["id"]}
    notify("item/started", dict(base, item={"type": "agentMessage", "id": item, "text": ""}))
    step = max(1, len(text) // 3)
    for i in range(0, len(text), step):
        notify("item/agentMessage/delta", dict(base, itemId=item, delta=text[i:i + step]))
    notify("item/completed", dict(base, item={"type": "agentMessage", "id": item, "text": text}))


def complete(status="completed", error=None):
    usage()
    notify("turn/completed", {"threadId": THREAD["id"], "turn": {
        "id": TURN["id"], "items": [], "status": status, "error": error, "durationMs": 7}})


def run_turn(prompt):
    base = {"threadId": THREAD["id"], "turnId": TURN["id"]}
    notify("turn/started", {"threadId": THREAD["id"], "turn": {"id": TURN["id"], "status": "inProgress"}})
    if "patch" in prompt:
        item = new_id("call")
        changes = [{"path": "hello.txt", "kind": {"type": "add"}, "diff": "+hello\n"}]
        notify("item/started", dict(base, item={"type": "fileChange", "id": item,
                                                "changes": changes, "status": "inProgress"}))
        rid, ev = ask("item/fileChange/requestApproval",
                      dict(base, itemId=item, reason="the test asks to write a file"))
        ev.wait()
        decision = reply_of(rid).get("result", {}).get("decision")
        notify("serverRequest/resolved", {"threadId": THREAD["id"], "requestId": rid})
        status = "completed" if decision == "accept" else "declined"
        notify("item/completed", dict(base, item={"type": "fileChange", "id": item,
                                                  "changes": changes, "status": status}))
        answer("patch " + status)
        complete()
    elif "plan" in prompt:
        notify("turn/plan/updated", dict(base, explanation="two steps", plan=[
            {"step": "read the file", "status": "completed"},
            {"step": "write the answer", "status": "inProgress"},
            {"step": "check it", "status": "pending"}]))
        answer("planned")
        complete()
    elif "withdraw" in prompt:
        item = new_id("call")
        notify("item/started", dict(base, item={"type": "commandExecution", "id": item,
                                                "command": "rm -rf /", "cwd": "/", "status": "inProgress"}))
        rid, _ = ask("item/commandExecution/requestApproval",
                     dict(base, itemId=item, command="rm -rf /", cwd="/", reason="why not"))
        time.sleep(0.2)
        notify("serverRequest/resolved", {"threadId": THREAD["id"], "requestId": rid})
        notify("item/completed", dict(base, item={"type": "commandExecution", "id": item,
                                                  "command": "rm -rf /", "status": "declined",
                                                  "aggregatedOutput": None, "exitCode": None}))
        answer("withdrawn")
        complete()
    elif "ask" in prompt:
        rid, ev = ask("item/tool/requestUserInput", dict(base, itemId="q1", questions=[]))
        ev.wait()
        got = reply_of(rid)
        answer("asked: " + json.dumps(got.get("error", got.get("result"))))
        complete()
    elif "deaf" in prompt:
        answer_started = new_id("msg")
        notify("item/started", dict(base, item={"type": "agentMessage", "id": answer_started, "text": ""}))
        notify("item/agentMessage/delta", dict(base, itemId=answer_started, delta="la la "))
        # never completes, whatever comes
    elif "longline" in prompt:
        send({"method": "item/agentMessage/delta", "params": dict(base, itemId="x", delta="y" * (4 << 20))})
    elif "exit" in prompt:
        sys.stderr.write("fatal: the fake was asked to exit\n")
        sys.stderr.flush()
        os._exit(3)
    else:
        answer("echo: " + prompt)
        complete()


def main():
    if sys.argv[1:] != ["app-server"]:
        sys.stderr.write("usage: fake_codex.py app-server\n")
        sys.exit(2)
    known = set()
    if os.environ.get("FAKE_CODEX_THREADS") and os.path.exists(os.environ["FAKE_CODEX_THREADS"]):
        known = set(open(os.environ["FAKE_CODEX_THREADS"]).read().split())
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        note(msg)
        method = msg.get("method")
        mid = msg.get("id")
        if method is None and mid in PENDING:  # a reply to our request
            PENDING[mid][1][0] = msg
            PENDING[mid][0].set()
            continue
        params = msg.get("params") or {}
        if method == "initialize":
            if os.environ.get("FAKE_CODEX_NO_INIT"):
                continue
            send({"id": mid, "result": {"userAgent": "fake_codex/0.169.0", "platformOs": "linux"}})
        elif method == "initialized":
            pass
        elif method in ("thread/start", "thread/resume"):
            tid = params.get("threadId") if method == "thread/resume" else new_id("thread")
            if method == "thread/resume" and tid not in known:
                send({"id": mid, "error": {"code": -32600, "message": "no rollout found for thread id " + tid}})
                continue
            known.add(tid)
            if os.environ.get("FAKE_CODEX_THREADS"):
                with open(os.environ["FAKE_CODEX_THREADS"], "a") as f:
                    f.write(tid + "\n")
            THREAD["id"] = tid
            send({"id": mid, "result": {"thread": {"id": tid, "path": "/nowhere/" + tid + ".jsonl"},
                                        "model": params.get("model") or "fake-model", "cwd": params.get("cwd"),
                                        "approvalPolicy": params.get("approvalPolicy") or "on-request"}})
        elif method == "turn/start":
            TURN["id"] = new_id("turn")
            send({"id": mid, "result": {"turn": {"id": TURN["id"], "status": "inProgress"}}})
            text = "".join(p.get("text", "") for p in params.get("input", []))
            TURN["prompt"] = text
            threading.Thread(target=run_turn, args=(text,), daemon=True).start()
        elif method == "turn/interrupt":
            send({"id": mid, "result": {}})
            if "deaf" not in str(TURN.get("prompt", "")):
                complete("interrupted")
        else:
            send({"id": mid, "error": {"code": -32601, "message": "unknown method " + str(method)}})


if __name__ == "__main__":
    main()
