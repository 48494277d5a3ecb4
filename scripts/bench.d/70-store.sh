# shellcheck shell=bash
# A store at month scale: 10,000 checkpoints of a 200-file project, each after a
# realistic step (most change a file or two, some none, some add, delete or rename one) with the
# transcript grown by a turn. genstore builds it once through the store's own Save, in one
# process (10,000 process starts would take an hour and measure nothing asked here); what is
# timed is whole rewind processes on the store it leaves, each gc on a fresh copy.
# Sourced by scripts/bench: uses median, timed, row, fmt_s, $BENCH_DIR, $BENCH_BIN, $REWIND_SRC.
st=$BENCH_DIR/store; mkdir -p "$st"
n=${BENCH_STORE_CHECKPOINTS:-10000}
proj=$st/p
if [ ! -d "$proj/.agent/rewind" ]; then
  (cd "$REWIND_SRC/rewind" && CGO_ENABLED=0 go build -trimpath -o "$BENCH_BIN/genstore" ./internal/genstore)
  echo "bench: building a store of $n checkpoints (minutes)" >&2
  genstore -dir "$proj" -n "$n" > "$st/gen.json"
  sync
fi
count=$(find "$proj/.agent/rewind/checkpoints" -mindepth 1 -maxdepth 1 -type d | wc -l)
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<< "$1"; }
label="$(thousands "$count") checkpoints"

# list: 20 rows of text cost what 20 rows of JSON cost, whatever the store's size.
read -r lt lj < <(median_pair "rewind -C $proj list" "rewind -C $proj list --json -n 20")
row "list (text, 20 rows), $label" "$lt" "list --json -n 20" "$lj" "≤ 1×"
row "list (text, 20 rows), $label" "$lt" "budget" "0.05" "≤ 50 ms"

printf '{"hook_event_name":"Status","session_id":"bench-session","transcript_path":"%s.session.jsonl","cwd":"%s","workspace":{"current_dir":"%s","project_dir":"%s"}}\n' \
  "$proj" "$proj" "$proj" "$proj" > "$st/status.json"
sl=$(median "rewind statusline < $st/status.json > /dev/null")
row "statusline, $label" "$sl" "budget" "0.01" "≤ 10 ms"

# validate reads every file of the store whole: the verified file it writes changes nothing of
# what the next run reads.
va=$(timed 4 "rewind -C $proj validate" "" --warmup 1 --runs 3)
row "validate, $label" "$va" "budget" "2" "≤ 2 s"

# gc deleting all but the newest 100, on a fresh copy each run (the copy is untimed).
gcp=$st/gc
fresh="rm -rf $gcp; cp -a $proj $gcp; sync"
gc=$(timed 4 "rewind -C $gcp gc --keep 100" "$fresh" --runs 3)
row "gc --keep 100 (deletes $(thousands $((count - 100))))" "$gc" "budget" "5" "≤ 5 s"

# Retention at a hook: max_checkpoints 100 in the project's configuration, a UserPromptSubmit
# hook (a checkpoint of the unchanged tree) with retention due, within the default budget (2 s):
# it plans from the store's index, deletes in rounds until the budget is spent; later hooks go
# on. A store made before saves kept an index gets one from the first gc or retention that reads
# it whole: here an untimed gc that deletes nothing.
fresh_index="$fresh; printf '{\"version\":1,\"retention\":{\"max_checkpoints\":100}}\\n' > $gcp/.agent/rewind/config.json; rewind -C $gcp gc --keep 1000000 > /dev/null"
prompt() { # prompt DUE: a UserPromptSubmit request, retention due or not
  printf '{"version":1,"event":"UserPromptSubmit","agent":"claude","project_dir":"%s","checkpoint":"always","prompt":"go on"%s,"retention_budget_ms":2000}\n' \
    "$gcp" "$([ "$1" = due ] && echo ',"retention":true')"
}
prompt due > "$st/hook-due.json"
prompt not > "$st/hook-not-due.json"
eval "$fresh_index"
nd=$(timed 4 "rewind hook < $st/hook-not-due.json" "" --warmup 2 --runs "$BENCH_RUNS")
row "UserPromptSubmit hook, retention not due, $label" "$nd" "budget" "2" "report"
eval "$fresh_index"
hooks=0 first_s="" first_n=""
while [ "$hooks" -lt 20 ]; do
  hooks=$((hooks + 1))
  t0=$(date +%s.%N)
  out=$(rewind hook < "$st/hook-due.json")
  t1=$(date +%s.%N)
  removed=$(sed -n 's/.*"removed":\([0-9]*\).*/\1/p' <<< "$out")
  [ -n "$first_s" ] || { first_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'); first_n=${removed:-0}; }
  left=$(find "$gcp/.agent/rewind/checkpoints" -mindepth 1 -maxdepth 1 -type d | wc -l)
  [ "$left" -gt 100 ] || break
done
printf '| %s | UserPromptSubmit hook, retention due, %s | first hook %s, deleted %s; all but 100 gone after %s hooks | budget | 2.0 s | %s | ≤ budget, catches up |\n' \
  "$BENCH_SECTION" "$label" "$(fmt_s "$first_s")" "$first_n" "$hooks" \
  "$(awk -v a="$first_s" 'BEGIN { printf "%.2f×", a/2 }')"
# The same hook when only the oldest round is due (retention run, a round's work): the store's
# size is what it reads before it, so this is the pre-read at this size.
due1=$(timed 4 "rewind hook < $st/hook-due.json" "$fresh_index; printf '{\"version\":1,\"retention\":{\"max_checkpoints\":$((count - 5))}}\\n' > $gcp/.agent/rewind/config.json" --runs 3)
row "UserPromptSubmit hook, retention due for 5, $label" "$due1" "budget" "2" "≤ budget"

# Disk: the store (hard links once) against what the steps wrote: every file written in full
# (a layer stores a changed file whole) plus the transcript appended.
disk=$(du -sb "$proj/.agent/rewind" | cut -f1)
changed=$(sed -n 's/.*"changed_bytes":\([0-9]*\).*/\1/p' "$st/gen.json")
appended=$(sed -n 's/.*"transcript_bytes":\([0-9]*\).*/\1/p' "$st/gen.json")
printf '| %s | disk use, %s | %s B | sum of what changed (files written %s B + transcript appended %s B) | %s B | %s | report |\n' \
  "$BENCH_SECTION" "$label" "$disk" "$changed" "$appended" "$((changed + appended))" \
  "$(awk -v a="$disk" -v b=$((changed + appended)) 'BEGIN { printf "%.2f×", a/b }')"
