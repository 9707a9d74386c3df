#!/usr/bin/env python3
"""fanout_agent.py: a stream-json agent for the hub fan-out benchmark (bench/fanout.sh).

Each prompt "N=<count>" or "N=<count> RATE=<per second>" is answered by <count> assistant rows
whose JSON line is ~1 KiB (BYTES=<n>: ~n bytes, at least the row's shell), then a result row. The text of row k starts with "MSG<k>;T<ns>;" (ns =
CLOCK_REALTIME at write time) so subscribers can check order/loss and measure latency.
RATE=0 (default) writes as fast as stdout accepts (batches of 64 rows per write).
"""
import json
import sys
import time

SESSION = "fanout-session"
LINE_BYTES = 1024


def row(k, line_bytes=LINE_BYTES):
    head = "MSG%d;T%d;" % (k, time.time_ns())
    shell = ('{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]},'
             '"session_id":"%s"}\n')
    pad = line_bytes - len(shell % ("", SESSION)) - len(head)
    return shell % (head + "x" * max(0, pad), SESSION)


def main():
    out = sys.stdout.buffer
    out.write((json.dumps({"type": "system", "subtype": "init", "session_id": SESSION,
                           "model": "fanout", "tools": []}) + "\n").encode())
    out.flush()
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        r = json.loads(raw)
        if r.get("type") != "user":
            continue
        content = r["message"]["content"]
        prompt = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        args = dict(p.split("=", 1) for p in prompt.split() if "=" in p)
        n = int(args.get("N", "1000"))
        rate = float(args.get("RATE", "0"))
        size = int(args.get("BYTES", str(LINE_BYTES)))
        if rate <= 0:
            batch = []
            for k in range(n):
                batch.append(row(k, size))
                if len(batch) == 64:
                    out.write("".join(batch).encode())
                    out.flush()
                    batch = []
            if batch:
                out.write("".join(batch).encode())
                out.flush()
        else:
            start = time.monotonic()
            for k in range(n):
                delay = start + k / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                out.write(row(k, size).encode())
                out.flush()
        out.write((json.dumps({"type": "result", "subtype": "success", "is_error": False,
                               "result": "sent %d" % n, "session_id": SESSION}) + "\n").encode())
        out.flush()


if __name__ == "__main__":
    main()
