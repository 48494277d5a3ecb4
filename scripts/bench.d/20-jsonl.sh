# shellcheck shell=bash
# scripts/bench section: rewind-jsonl tail scans on generated Claude transcripts.
# back 3 and cursor must cost the same on 1 GiB as on 1 MiB (≤ 2×, whole processes), stay
# under 1/50 of a full forward read, and use memory that does not grow with the file size.
# Sourced by scripts/bench: uses median, peak_rss_mb, row, $BENCH_DIR, $REWIND_SRC.

jsonl_dir=$BENCH_DIR/jsonl
mkdir -p "$jsonl_dir"
for size in 1MiB 100MiB 1GiB; do
  if [ ! -s "$jsonl_dir/t-$size.jsonl" ]; then
    (cd "$REWIND_SRC/jsonl" && go run ./internal/gentranscript -size "$size" -o "$jsonl_dir/t-$size.jsonl")
  fi
done
small=$jsonl_dir/t-1MiB.jsonl
mid=$jsonl_dir/t-100MiB.jsonl
big=$jsonl_dir/t-1GiB.jsonl

# The 1 MiB file may hold fewer than 3 prompts: back then scans all of it and exits 4, which
# is the most it can cost there. `|| true` keeps that from stopping the run.
back_small=$(median "rewind-jsonl back 3 $small >/dev/null || true")
back_big=$(median "rewind-jsonl back 3 $big >/dev/null")
cursor_small=$(median "rewind-jsonl cursor $small >/dev/null")
cursor_big=$(median "rewind-jsonl cursor $big >/dev/null")
cat_big=$(median "cat $big >/dev/null")

row "back 3, 1 GiB" "$back_big" "back 3, 1 MiB" "$back_small" "≤ 2×"
row "cursor, 1 GiB" "$cursor_big" "cursor, 1 MiB" "$cursor_small" "≤ 2×"
row "back 3, 1 GiB" "$back_big" "cat 1 GiB" "$cat_big" "< 0.02×"
row "cursor, 1 GiB" "$cursor_big" "cat 1 GiB" "$cat_big" "< 0.02×"

rss_row() {
  local figure=$1 ours=$2 ref=$3
  local ratio; ratio=$(awk -v a="$ours" -v b="$ref" 'BEGIN { if (b > 0) printf "%.2f×", a/b; else print "-" }')
  printf '| %s | %s | %s MiB | %s | %s MiB | %s | %s |\n' "${BENCH_SECTION:-}" "$figure" "$ours" "same, 100 MiB" "$ref" "$ratio" "≤ 1.2×"
}
rss_row "peak RSS back 3, 1 GiB" "$(peak_rss_mb "rewind-jsonl back 3 $big")" "$(peak_rss_mb "rewind-jsonl back 3 $mid")"
rss_row "peak RSS cursor, 1 GiB" "$(peak_rss_mb "rewind-jsonl cursor $big")" "$(peak_rss_mb "rewind-jsonl cursor $mid")"
