#!/usr/bin/env python3
# Usage: gen_transcript.py FILE GIB (seeded: the same bytes every run).
# Realistic Claude Code rows: prompts, thinking (text + signature), thinking_tokens counters,
# tool calls, long tool results (with toolUseResult copies), answers, and non-frame rows.
import json, random, sys, uuid
path, gib = sys.argv[1], float(sys.argv[2])
limit = int(gib * (1 << 30))
rnd = random.Random(1)
words = ("the of and to in is for that with on as it by this be are from at or an was "
         "function return const let var if else while error output test file line path "
         "build \"quoted\" tab\there new\nline café 😀 {json} [array] \\backslash").split(" ")
pool = " ".join(rnd.choice(words) for _ in range(400000))
def text(n):
    i = rnd.randrange(0, len(pool) - n - 1)
    return pool[i:i + n]
sid = str(uuid.UUID(int=rnd.getrandbits(128)))
env = {"isSidechain": False, "userType": "external", "cwd": "/work/project", "sessionId": sid,
       "version": "2.0.55", "gitBranch": "main"}
n = 0
def row(kind, **kw):
    global n
    n += 1
    r = {"parentUuid": "p%d" % n, **env, "type": kind, **kw, "uuid": "u%d" % n,
         "timestamp": "2026-01-01T00:00:%02d.000Z" % (n % 60)}
    return json.dumps(r, ensure_ascii=False, separators=(",", ":"))
def usage():
    return {"input_tokens": rnd.randrange(10, 5000), "cache_read_input_tokens": rnd.randrange(0, 90000),
            "output_tokens": rnd.randrange(1, 4000)}
written = 0
turn = 0
with open(path, "w", encoding="utf-8", buffering=1 << 22) as out:
    while written < limit:
        turn += 1
        lines = [json.dumps({"type": "file-history-snapshot", "messageId": "m%d" % turn,
                             "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False}),
                 row("user", message={"role": "user", "content": text(rnd.randrange(40, 1200))})]
        total = 0
        for k in range(rnd.randrange(2, 14)):
            mid = "msg_%d_%d" % (turn, k)
            th = text(rnd.randrange(200, 6000))
            lines.append(row("system", subtype="thinking_tokens", estimated_tokens=total + len(th) // 4,
                             estimated_tokens_delta=len(th) // 4))
            total += len(th) // 4
            lines.append(row("assistant", message={"id": mid, "type": "message", "role": "assistant",
                             "model": "claude-opus-4-5", "content": [{"type": "thinking", "thinking": th,
                             "signature": text(300)}], "stop_reason": None, "usage": usage()}))
            tid = "toolu_%d_%d" % (turn, k)
            lines.append(row("assistant", message={"id": mid, "type": "message", "role": "assistant",
                             "model": "claude-opus-4-5", "content": [{"type": "tool_use", "id": tid,
                             "name": "Bash", "input": {"command": text(rnd.randrange(20, 300))}}],
                             "stop_reason": "tool_use", "usage": usage()}))
            res = text(rnd.choice([300, 2000, 8000, 30000, 60000]))
            lines.append(row("user", message={"role": "user", "content": [{"tool_use_id": tid,
                             "type": "tool_result", "content": res}]},
                             toolUseResult={"stdout": res, "stderr": "", "interrupted": False,
                                            "isImage": False}))
        lines.append(row("assistant", message={"id": "msg_%d_end" % turn, "type": "message",
                         "role": "assistant", "model": "claude-opus-4-5",
                         "content": [{"type": "text", "text": text(rnd.randrange(100, 3000))}],
                         "stop_reason": "end_turn", "usage": usage()}))
        if turn % 7 == 0:
            lines.append(json.dumps({"type": "queue-operation", "operation": "enqueue",
                                     "timestamp": "2026-01-01T00:00:00Z", "sessionId": sid}))
        chunk = "\n".join(lines) + "\n"
        out.write(chunk)
        written += len(chunk.encode("utf-8"))
