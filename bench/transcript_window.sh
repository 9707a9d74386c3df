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
python3 "$(dirname "$0")/gen_transcript.py" "$FILE" "$GIB"
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
