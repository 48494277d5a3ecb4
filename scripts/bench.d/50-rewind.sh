# shellcheck shell=bash
# The rewind porcelain: what a checkpoint costs (tree and transcript) and what list costs.
# Sourced by scripts/bench: uses median, median_pair, row, goroot_copy, goroot_repo, $BENCH_DIR, $REWIND_SRC.
rw=$BENCH_DIR/rewind; mkdir -p "$rw"
proj=$rw/goroot
goroot_repo "$proj"
[ -d "$proj/.agent/rewind" ] || rewind -C "$proj" init >/dev/null

# A checkpoint after one change, against rewind-snap create of the same tree (no transcript), both
# writing new files.
victim=$proj/fmt/print.go
read -r save snapc < <(median_pair "rewind -C $proj save --full" "rewind-snap create --root $proj --out $rw/s.tar.gz --manifest $rw/s.m" \
  "echo '// bench' >> $victim" "echo '// bench' >> $victim; rm -f $rw/s.tar.gz $rw/s.m")
row "save --full after one change" "$save" "rewind-snap create" "$snapc" "≤ 1.1×"
sleep 2 # past the racy window, as between two real checkpoints
(cd "$proj" && git status --porcelain >/dev/null)
read -r same gst < <(median_pair "rewind -C $proj save" "git -C $proj status --porcelain")
row "save, tree unchanged" "$same" "git status --porcelain" "$gst" "≤ 1.5×"

# Transcript capture costs what was appended: 1 GiB transcript + 1 MiB appended, against a
# 1 MiB transcript captured whole (both in a small project, so the tree costs little).
jdir=$BENCH_DIR/jsonl; mkdir -p "$jdir"
for size in 1MiB 1GiB; do
  [ -s "$jdir/t-$size.jsonl" ] || (cd "$REWIND_SRC/jsonl" && go run ./internal/gentranscript -size "$size" -o "$jdir/t-$size.jsonl")
done
small=$rw/small; mkdir -p "$small"; echo x > "$small/a.txt"
cp "$jdir/t-1GiB.jsonl" "$rw/big.jsonl"
[ -d "$small/.agent/rewind" ] || rewind -C "$small" init >/dev/null
rewind -C "$small" save --transcript "$rw/big.jsonl" >/dev/null # the first capture is whole
big=$(median "rewind -C $small save --transcript $rw/big.jsonl" "cat $jdir/t-1MiB.jsonl >> $rw/big.jsonl")
one=$(median "rewind -C $small save --transcript $jdir/t-1MiB.jsonl" "rm -rf $small/.agent && rewind -C $small init >/dev/null")
row "save, 1 GiB transcript + 1 MiB appended" "$big" "save, 1 MiB transcript (whole)" "$one" "≤ 3×"

# list with 1,000 checkpoints must not open archives.
many=$rw/many
if [ ! -d "$many/.agent/rewind" ]; then
  mkdir -p "$many"; echo x > "$many/a.txt"; rewind -C "$many" init >/dev/null
  for i in $(seq 1000); do echo "$i" > "$many/a.txt"; rewind -C "$many" save "step $i" >/dev/null; done
fi
list=$(median "rewind -C $many list -n 0 > /dev/null")
row "list, 1,000 checkpoints" "$list" "budget" "0.1" "< 100 ms"

# The status line Claude Code runs on every refresh: the payload's shape as Claude Code sends it
# to a statusLine command, against the same 1,000-checkpoint store.
printf '{"hook_event_name":"Status","session_id":"7c9a6a3e-1b7e-4b8e-9a51-0d6c1f5e2a10","transcript_path":"%s/t.jsonl","cwd":"%s","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},"workspace":{"current_dir":"%s","project_dir":"%s"},"version":"2.1.197"}\n' \
  "$many" "$many" "$many" "$many" > "$rw/status.json"
[ -n "$(rewind statusline < "$rw/status.json")" ] || echo "bench: warning: rewind statusline printed nothing" >&2
sl=$(median "rewind statusline < $rw/status.json > /dev/null")
row "statusline, 1,000 checkpoints" "$sl" "budget" "0.01" "< 10 ms"
