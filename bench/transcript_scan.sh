#!/usr/bin/env bash
# Whole-file scans side by side in one run, on the generated 2.5 GiB transcript (the same bytes as
# bench/transcript_window.sh): `cat FILE > /dev/null`, `sluice transcript turns`, `sluice
# transcript index`, each three times from a warm page cache, then once each with --full-parse
# (every row parsed in full, the scan before the row scanner) and their outputs compared.
# Wall, MB/s, peak RSS.
# Usage: bench/transcript_scan.sh [path/to/sluice] [GiB] [workdir] [existing FILE to reuse]
# A generated file lives in a temporary directory (default under /tmp), deleted on exit.
set -euo pipefail

SLUICE=${1:-build/release/apps/sluice/sluice}
GIB=${2:-2.5}
BASE=${3:-/tmp}
[[ -x "$SLUICE" ]] || { echo "no sluice binary at $SLUICE (build the release preset)" >&2; exit 2; }

WORK=$(mktemp -d "$BASE/sluice-transcript-scan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [[ -n "${4:-}" ]]; then
    FILE=$WORK/transcript.jsonl
    ln -s "$(realpath "$4")" "$FILE"
else
    FILE="$WORK/transcript.jsonl"
    need_kib=$(python3 -c "print(int($GIB * 1.1 * 1024 * 1024))")
    avail_kib=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
    (( avail_kib > need_kib )) || { echo "not enough space in $BASE" >&2; exit 2; }
    echo "generating ${GIB} GiB in $FILE ..." >&2
    python3 "$(dirname "$0")/gen_transcript.py" "$FILE" "$GIB"
fi
SIZE=$(stat -L -c %s "$FILE")

run() {
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/out" 2> "$WORK/err" || {
        echo "$name failed: $(cat "$WORK/err")" >&2; exit 1; }
    read -r secs kib < "$WORK/time"
    printf '| %s | %s | %s | %s |\n' "$name" "$secs" \
        "$(python3 -c "print(round($SIZE / 1e6 / max($secs, 0.01)))")" "$(( kib / 1024 ))"
}

cat "$FILE" > /dev/null # warm the page cache the same way for every contender
echo
echo "file: $SIZE bytes; nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo '| command | wall s | MB/s | peak RSS MiB |'
echo '|---|---|---|---|'
for i in 1 2 3; do
    run "cat FILE > /dev/null #$i" sh -c "cat '$FILE' > /dev/null"
    run "sluice transcript turns #$i" "$SLUICE" transcript turns "$FILE" --json
    cp "$WORK/out" "$WORK/turns.json"
    # index writes FILE.sidx beside the file: a symlinked file gets its index in WORK.
    run "sluice transcript index #$i" "$SLUICE" transcript index "$FILE" --json
done
run "sluice transcript turns --full-parse (every row parsed, as before)" \
    "$SLUICE" transcript turns "$FILE" --json --full-parse
cmp -s "$WORK/out" "$WORK/turns.json" && echo "turns output: identical to --full-parse" \
    || echo "turns output: DIFFERS from --full-parse"
cp "$WORK/transcript.jsonl.sidx" "$WORK/fast.sidx"
run "sluice transcript index --full-parse" "$SLUICE" transcript index "$FILE" --json --full-parse
cmp -s "$WORK/transcript.jsonl.sidx" "$WORK/fast.sidx" && echo "FILE.sidx: identical to --full-parse" \
    || echo "FILE.sidx: DIFFERS from --full-parse"
echo
echo "turns: $(python3 -c "import json; d=json.load(open('$WORK/turns.json')); print(d['total_frames'], 'frames,', len(d['openings']), 'openings')")"
echo "index: $(cat "$WORK/out")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
