#!/usr/bin/env python3
"""replay_agent.py: a stream-json agent that answers each prompt with a real transcript's rows.

Usage (as a hub's --agent-cmd): python3 bench/replay_agent.py TRANSCRIPT.jsonl
Each prompt is answered by the transcript's `assistant` and `user` rows as they are, then a
result row, so the seat's frames have real content (bench/cluster_memory.py: what a seat's
Redis stream costs for real frames, not for padding that compresses to nothing).
"""
import json
import sys

SESSION = "replay-session"


def main():
    rows = []
    with open(sys.argv[1], "rb") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("type") in ("assistant", "user"):
                r["session_id"] = SESSION
                rows.append(json.dumps(r, separators=(",", ":")) + "\n")
    out = sys.stdout
    out.write(json.dumps({"type": "system", "subtype": "init", "session_id": SESSION,
                          "model": "replay", "tools": []}) + "\n")
    out.flush()
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        try:
            r = json.loads(raw)
        except ValueError:
            continue
        if r.get("type") != "user":
            continue
        out.write("".join(rows))
        out.write(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                              "result": "replayed %d rows" % len(rows),
                              "session_id": SESSION}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
