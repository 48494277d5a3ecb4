# shellcheck shell=bash
# scripts/bench section: rewind-fork (sourced by scripts/bench; see lib.sh).
#   prefix copy: fork at 90% of a 1 GiB transcript vs cp --reflink=auto of the whole file made
#                durable as the fork is (cp + sync of the copy; ≤ 1.2×), and vs cp alone (report)
#   snapshot:    fork at 90% from transcript.jsonl.gz vs gzip -dc of it to /dev/null   (≤ 1.2×)
# The transcript is the real Claude Code fixture repeated to 1 GiB (every line a real event).

fork_dir=$BENCH_DIR/fork
mkdir -p "$fork_dir"
fork_src=$fork_dir/0b7c1a9e-0000-4000-8000-00000000b001.jsonl
if [ ! -s "$fork_src" ]; then
  fixture=$REWIND_SRC/internal/fixtures/claude/realclient-cc2.1.197-4-prompts-resumed.jsonl
  [ -r "$fixture" ] || { echo "bench fork: error: $fixture not found" >&2; exit 1; }
  for _ in $(seq 40); do cat "$fixture"; done > "$fork_dir/chunk"  # ~1 MB of whole lines
  for _ in $(seq 1075); do cat "$fork_dir/chunk"; done > "$fork_src"
  pigz -c "$fork_src" > "$fork_src.gz"
fi
fork_size=$(stat -c %s "$fork_src")
fork_chunk=$(stat -c %s "$fork_dir/chunk")
fork_off=$(( fork_size * 9 / 10 / fork_chunk * fork_chunk ))  # a line boundary near 90%

# Each pair is timed in alternation; before each run (untimed) the previous output is removed
# and the disk synced, so that no run pays for the writeback of the one before it (cp leaves
# 1 GiB unsynced).
fork_cmd="rewind-fork create --from $fork_src --offset $fork_off --out $fork_dir/out.jsonl"
fork_prep="rm -f $fork_dir/out.jsonl; sync"
cp_prep="rm -f $fork_dir/cp.jsonl; sync"
read -r fk cpm < <(median_pair "$fork_cmd" "cp --reflink=auto $fork_src $fork_dir/cp.jsonl" "$fork_prep" "$cp_prep")
row "fork at 90% of $((fork_size >> 20)) MiB (prefix copy)" "$fk" "cp --reflink=auto (whole file)" "$cpm" "report"
# The fork is fsynced before it appears (no half-written session file after a crash); cp is
# not. The same copy made durable shows what that costs.
read -r fk cps < <(median_pair "$fork_cmd" "sh -c 'cp --reflink=auto $fork_src $fork_dir/cp.jsonl && sync $fork_dir/cp.jsonl'" "$fork_prep" "$cp_prep")
row "fork at 90% of $((fork_size >> 20)) MiB (prefix copy)" "$fk" "cp --reflink=auto + sync of the copy" "$cps" "≤ 1.2×"
row "fork at 90% from transcript.jsonl.gz (snapshot)" \
  "$(median "rm -f $fork_dir/out.jsonl; rewind-fork create --from $fork_dir/gone.jsonl --agent claude --offset $fork_off --snapshot $fork_src.gz --out $fork_dir/out.jsonl")" \
  "gzip -dc > /dev/null (whole file)" \
  "$(median "gzip -dc $fork_src.gz > /dev/null")" "≤ 1.2×"
rm -f "$fork_dir/out.jsonl" "$fork_dir/cp.jsonl"
