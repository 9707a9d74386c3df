#!/usr/bin/env bash
# Side by side on a generated 2.5 GiB transcript: `sluice transcript window` (without and with
# the index) vs `tail -c <window bytes>` vs a whole-file read-and-parse. Wall time and peak RSS.
# Usage: bench/transcript_window.sh [path/to/sluice] [GiB] [workdir]
# The transcript is generated in a temporary directory (default under /tmp), never in the tree,
# and deleted on exit. Needs ~2x the size free. Prints a Markdown table for bench/RESULTS.md.
set -euo pipefail

SLUICE=${1:-build/release/apps/sluice/sluice}
GIB=${2:-2.5}
BASE=${3:-/tmp}
[[ -x "$SLUICE" ]] || { echo "no sluice binary at $SLUICE (build the release preset)" >&2; exit 2; }

WORK=$(mktemp -d "$BASE/sluice-transcript-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE="$WORK/transcript.jsonl"

need_kib=$(python3 -c "print(int($GIB * 2.2 * 1024 * 1024))")
avail_kib=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
(( avail_kib > need_kib )) || { echo "not enough space in $BASE" >&2; exit 2; }

echo "generating ${GIB} GiB in $FILE ..." >&2
python3 - "$FILE" "$GIB" <<'PY'
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
PY
SIZE=$(stat -c %s "$FILE")
echo "generated $SIZE bytes" >&2

# run NAME CMD...: wall seconds and peak RSS (KiB) via /usr/bin/time, output discarded
run() {
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/out" 2> "$WORK/err" || {
        echo "$name failed: $(cat "$WORK/err")" >&2; exit 1; }
    read -r secs kib < "$WORK/time"
    printf '| %s | %s | %s |\n' "$name" "$secs" "$(( kib / 1024 ))"
}

cat "$FILE" > /dev/null # warm the page cache the same way for every contender
echo
echo "file: $SIZE bytes; nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo '| command | wall s | peak RSS MiB |'
echo '|---|---|---|'
run 'sluice transcript window (no index: counting scan + window)' "$SLUICE" transcript window "$FILE" --json
cp "$WORK/out" "$WORK/window-noindex.json"
run 'sluice transcript index (one-off, full parse)' "$SLUICE" transcript index "$FILE" --json
for i in 1 2 3; do
    run "sluice transcript window (indexed) #$i" "$SLUICE" transcript window "$FILE" --json
done
cp "$WORK/out" "$WORK/window.json"
WBYTES=$(python3 -c "import json; print(json.load(open('$WORK/window.json'))['bytes'])")
for i in 1 2 3; do
    run "tail -c $WBYTES (window bytes) #$i" sh -c "tail -c $WBYTES '$FILE' > /dev/null"
done
tail -c "$WBYTES" "$FILE" | tail -n +2 > "$WORK/tail.jsonl"
run 'parse the window bytes (sluice transcript turns on the tail)' "$SLUICE" transcript turns "$WORK/tail.jsonl" --json
run 'whole file: sluice transcript turns (full read + parse, C++)' "$SLUICE" transcript turns "$FILE" --json
run 'whole file: python3 json.loads per line (naive)' python3 -c '
import json, sys
for l in open(sys.argv[1], "rb"):
    json.loads(l)' "$FILE"
echo
echo "window (indexed): $(cat "$WORK/window.json")"
echo "window (no index): $(cat "$WORK/window-noindex.json")"
