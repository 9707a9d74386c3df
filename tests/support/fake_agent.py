#!/usr/bin/env python3
"""fake_agent.py: a stand-in agent CLI speaking Claude Code's stream-json on stdio, for tests.

Reads stream-json user rows on stdin and answers each prompt by what it says:
  plain text     -> thinking + text partials (stream_event), an assistant row, a result row
  "tool"         -> a tool_use with input_json_delta partials, a tool_result user row, an answer
  "hang"         -> a text partial, then waits; a control_request interrupt ends it (result)
  "exit"         -> writes "fatal: boom" to stderr and exits with status 3
  "crash"        -> writes "about to abort" to stderr and aborts (SIGABRT)
  "longline N"   -> writes one line of N bytes (no JSON), then a normal answer
  "noise"        -> a non-JSON line and an echo of the user row first, then a normal answer
  "permission"   -> a control_request (can_use_tool), waits for its control_response, answers
  "permission: C" -> the same asking to run command C, under a request id of its own (perm-<random hex>)
  "big N"        -> a tool turn whose tool_result holds N bytes of numbered lines, then an answer
  "bigmany N"    -> the same, the N bytes as many 1,000-byte text blocks (no one block is large)
  "drip N MS"    -> N assistant rows, one every MS milliseconds (a turn that keeps publishing)
  "settings?"    -> answers with the set_permission_mode/set_model control requests it got, its
                    --permission-mode/--model flags and CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS
  "needs you"    -> session_state_changed requires_action, 1.5 s later running, then an answer
  "unknown row"  -> a row of a type hosts do not know (rate_limit_event), then an answer
Flags: --ignore-interrupt (never answer interrupts: the host must terminate it),
       --pid-file PATH (writes its pid there at start).
"""
import json
import os
import sys

SESSION = "fake-session-0001"
# As the real Claude Code does (checked against the pinned CLI): --resume ID keeps that id.
if "--resume" in sys.argv[:-1]:
    SESSION = sys.argv[sys.argv.index("--resume") + 1]
IGNORE_INTERRUPT = "--ignore-interrupt" in sys.argv
IGNORE_SETTINGS = "--ignore-settings" in sys.argv  # never answers set_permission_mode/set_model
seq = 0


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def uuid():
    global seq
    seq += 1
    return "00000000-0000-4000-8000-%012d" % seq


def stream_event(event):
    out({"type": "stream_event", "event": event, "parent_tool_use_id": None,
         "session_id": SESSION, "uuid": uuid()})


def assistant(msg_id, content, stop=None):
    out({"type": "assistant",
         "message": {"id": msg_id, "type": "message", "role": "assistant", "model": "fake-model",
                     "content": content, "stop_reason": stop, "usage": {"input_tokens": 3, "output_tokens": 5}},
         "parent_tool_use_id": None, "session_id": SESSION, "uuid": uuid()})


def result(text, subtype="success", is_error=False, turns=1):
    out({"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 1,
         "num_turns": turns, "result": text, "session_id": SESSION,
         "usage": {"input_tokens": 3, "output_tokens": 5}, "uuid": uuid()})


def answer(prompt):
    stream_event({"type": "message_start", "message": {"id": "msg_a", "role": "assistant"}})
    stream_event({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})
    stream_event({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "pondering"}})
    stream_event({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    reply = "you said: " + prompt
    for i in range(0, len(reply), 5):
        stream_event({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": reply[i:i + 5]}})
    assistant("msg_a", [{"type": "thinking", "thinking": "pondering", "signature": "sig"}])
    assistant("msg_a", [{"type": "text", "text": reply}], "end_turn")
    result(reply)


def say(text):
    assistant("msg_s", [{"type": "text", "text": text}], "end_turn")
    result(text)


def tool_turn():
    stream_event({"type": "message_start", "message": {"id": "msg_t", "role": "assistant"}})
    stream_event({"type": "content_block_start", "index": 0,
                  "content_block": {"type": "tool_use", "id": "toolu_fake_1", "name": "Bash", "input": {}}})
    for piece in ['{"comm', 'and": "l', 's"}']:
        stream_event({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}})
    assistant("msg_t", [{"type": "tool_use", "id": "toolu_fake_1", "name": "Bash", "input": {"command": "ls"}}], "tool_use")
    out({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_fake_1", "content": "a.txt\nb.txt", "is_error": False}]},
        "parent_tool_use_id": None, "session_id": SESSION, "uuid": uuid()})
    assistant("msg_u", [{"type": "text", "text": "two files"}], "end_turn")
    result("two files", turns=2)


def big_turn(n, many=False):
    lines = []
    size = 0
    i = 0
    while size < n:
        line = "line %08d " % i + "y" * 50
        lines.append(line)
        size += len(line) + 1
        i += 1
    body = "\n".join(lines)[:n]
    if many:
        body = [{"type": "text", "text": body[i:i + 1000]} for i in range(0, len(body), 1000)]
    assistant("msg_b", [{"type": "tool_use", "id": "toolu_big_1", "name": "Bash", "input": {"command": "cat big"}}], "tool_use")
    out({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_big_1", "content": body, "is_error": False}]},
        "parent_tool_use_id": None, "session_id": SESSION, "uuid": uuid()})
    assistant("msg_c", [{"type": "text", "text": "that was big"}], "end_turn")
    result("that was big", turns=2)


def main():
    if "--pid-file" in sys.argv:
        with open(sys.argv[sys.argv.index("--pid-file") + 1], "w") as f:
            f.write(str(os.getpid()))
    out({"type": "system", "subtype": "init", "session_id": SESSION, "pid": os.getpid(),
         # As Claude Code's init row: the model this process uses (its --model, else its own).
         "model": sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv[:-1] else "fake-model",
         "tools": ["Bash"], "uuid": uuid()})
    hanging = False
    waiting_permission = None
    settings = []
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        row = json.loads(raw)
        kind = row.get("type")
        if kind == "control_request" and row.get("request", {}).get("subtype") in ("set_permission_mode", "set_model"):
            req = row["request"]
            settings.append("%s=%s" % (req["subtype"], req.get("mode", req.get("model"))))
            if IGNORE_SETTINGS:
                continue
            out({"type": "control_response", "response": {"subtype": "success", "request_id": row.get("request_id")}})
            continue
        if kind == "control_request":
            if row.get("request", {}).get("subtype") == "interrupt" and not IGNORE_INTERRUPT:
                out({"type": "control_response", "response": {"subtype": "success", "request_id": row.get("request_id")}})
                if hanging:
                    hanging = False
                    result("interrupted", subtype="error_during_execution", is_error=True)
            continue
        if kind == "control_response":
            if waiting_permission is not None:
                waiting_permission = None
                resp = row.get("response", {})
                inner = resp.get("response") or {}
                how = inner.get("behavior") if isinstance(inner, dict) else None
                cmd = (inner.get("updatedInput") or {}).get("command") if how == "allow" else None
                result("permission answered: " + resp.get("subtype", "?")
                       + (" " + how if how else "") + (" " + cmd if cmd else ""))
            continue
        if kind != "user":
            continue
        content = row["message"]["content"]
        prompt = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        if prompt == "tool":
            tool_turn()
        elif prompt == "hang":
            stream_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "working"}})
            hanging = True
        elif prompt == "exit":
            sys.stderr.write("fatal: boom\n")
            sys.stderr.flush()
            sys.exit(3)
        elif prompt == "crash":
            sys.stderr.write("about to abort\n")
            sys.stderr.flush()
            os.abort()
        elif prompt.startswith("longline"):
            n = int(prompt.split()[1])
            sys.stdout.write("x" * n + "\n")
            sys.stdout.flush()
            answer(prompt)
        elif prompt.startswith("big "):
            big_turn(int(prompt.split()[1]))
        elif prompt.startswith("drip "):
            _, n, ms = prompt.split()
            import time
            for i in range(int(n)):
                assistant("msg_d%d" % i, [{"type": "text", "text": "drip %d" % i}])
                time.sleep(int(ms) / 1000.0)
            result("dripped")
        elif prompt.startswith("bigmany "):
            big_turn(int(prompt.split()[1]), many=True)
        elif prompt == "noise":
            sys.stdout.write("this is not json\n")
            out(row)  # an echo of the prompt, as --replay-user-messages does
            answer(prompt)
        elif prompt == "settings?":
            flag = lambda f: sys.argv[sys.argv.index(f) + 1] if f in sys.argv else "-"
            say("got [%s] flags mode=%s model=%s state_events=%s" % (
                " ".join(settings), flag("--permission-mode"), flag("--model"),
                os.environ.get("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS", "-")))
        elif prompt == "budget?":
            say("budget=%s" % (sys.argv[sys.argv.index("--max-budget-usd") + 1]
                               if "--max-budget-usd" in sys.argv[:-1] else "-"))
        elif prompt == "needs you":
            import time
            out({"type": "system", "subtype": "session_state_changed", "state": "requires_action",
                 "session_id": SESSION, "uuid": uuid()})
            time.sleep(1.5)
            out({"type": "system", "subtype": "session_state_changed", "state": "running",
                 "session_id": SESSION, "uuid": uuid()})
            answer(prompt)
        elif prompt == "unknown row":
            out({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"},
                 "session_id": SESSION, "uuid": uuid()})
            answer(prompt)
        elif prompt == "permission":
            waiting_permission = "perm-1"
            out({"type": "control_request", "request_id": "perm-1",
                 "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}}})
        elif prompt.startswith("permission: "):
            waiting_permission = "perm-" + os.urandom(6).hex()
            out({"type": "control_request", "request_id": waiting_permission,
                 "request": {"subtype": "can_use_tool", "tool_name": "Bash",
                             "input": {"command": prompt[len("permission: "):]}}})
        else:
            answer(prompt)


if __name__ == "__main__":
    main()
