# shellcheck shell=bash
# Monorepo scale: Rewind on trees of 10k, 100k, 230k and 1M files, each a git
# repository with one commit, every figure against `git status --porcelain` (or `tar | pigz -1`)
# of the same tree in the same run. The trees are built once under $BENCH_DIR/scale and reused:
# 1, 9 and 20 copies of GOROOT/src, and 1,000,000 generated small files (rewind/internal/genfiles);
# building them takes minutes and about 20 GB. Then:
#   - at 230k: the checkpoint, restore, diff and hook figures, the full checkpoint against
#     `tar | pigz -1 > file; sync file`, and the peak RSS of each command (also at 1M);
#   - the cost curve: no-op and one-change checkpoints and git status at every size, written to
#     $BENCH_DIR/scale/curve.tsv and plotted (rewind/internal/benchplot) into docs/scale.svg;
#   - correctness at 230k: a chain of checkpoints, restore, validate, gc, restore, each checked
#     against git's view of the tree; the section stops with an error on a wrong result.
# Figures that take seconds a run are timed over BENCH_SCALE_RUNS rounds (default 3) after one
# warm-up round; the others over BENCH_RUNS. Progress goes to stderr.
# Sourced by scripts/bench: uses median, median_pair, one, row, peak_rss_mb, goroot_copy, fmt_s,
# $BENCH_DIR, $BENCH_BIN, $REWIND_SRC, $PAIR_WARMUP.
sc=$BENCH_DIR/scale; mkdir -p "$sc"
sc_runs=${BENCH_SCALE_RUNS:-3}
sc_t0=$(date +%s)
sc_log() { printf 'bench scale: [%4ds] %s\n' "$(($(date +%s) - sc_t0))" "$*" >&2; }
sc_fail() { printf 'bench scale: error: %s\n' "$*" >&2; exit 1; }

# sc_commit DIR: DIR made a git repository with one commit of everything in it, automatic gc
# off (see goroot_repo), its index fresh, and the writeback done before anything is timed.
sc_commit() {
  (cd "$1" && git init -q && git config gc.auto 0 && git config maintenance.auto false && git add -A &&
    git -c user.name=b -c user.email=b@b commit -qm bench && git status --porcelain >/dev/null)
  sync
}

# sc_tree NAME: the tree $sc/NAME, built once (a .built marker beside it says it is complete).
sc_tree() {
  local dir=$sc/$1
  if [ ! -e "$dir.built" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    sc_log "building the $1 tree (once; minutes)"
    case $1 in
      t1m)
        (cd "$REWIND_SRC/rewind" && CGO_ENABLED=0 go build -trimpath -o "$BENCH_BIN/genfiles" ./internal/genfiles)
        rmdir "$dir"; genfiles -dir "$dir" -n 1000000 >/dev/null ;;
      *)
        local copies i
        case $1 in t10k) copies=1 ;; t100k) copies=9 ;; t230k) copies=20 ;; esac
        for ((i = 1; i <= copies; i++)); do cp -r "$(goroot_copy)" "$dir/$(printf 'src%02d' "$i")"; done ;;
    esac
    sc_commit "$dir"
    touch "$dir.built"
  fi
}

for sc_name in t10k t100k t230k t1m; do sc_tree "$sc_name"; done

# sc_files NAME: the files of a tree (git's count, kept beside it).
sc_files() {
  [ -s "$sc/$1.files" ] || git -C "$sc/$1" ls-files | wc -l > "$sc/$1.files"
  cat "$sc/$1.files"
}
# sc_victim NAME: the file a one-change step appends a line to.
sc_victim() { case $1 in t1m) echo "$sc/$1/m000/p000/d00/f000.go" ;; *) echo "$sc/$1/src01/fmt/print.go" ;; esac; }
# sc_newest NAME: the newest checkpoint's manifest (ids sort by time, as a glob does).
sc_newest() { local c; for c in "$sc/$1/.agent/rewind/checkpoints"/*; do :; done; echo "$c/manifest"; }
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<< "$1"; }

# sc_store NAME: a store holding a full checkpoint of the tree (once).
sc_store() {
  if [ ! -d "$sc/$1/.agent/rewind" ]; then
    sc_log "$1: first (full) checkpoint"
    rewind -C "$sc/$1" init >/dev/null
    rewind -C "$sc/$1" save --full base >/dev/null
    sync
  fi
  sleep 2 # past the racy window, as between two real checkpoints
}

# sc_rss LABEL NAME CMD: a peak RSS row, kept in sc_rss_last.
sc_rss() {
  sc_rss_last=$(peak_rss_mb "$3")
  printf '| %s | peak RSS, %s, %s files | %s MiB | | | | ≤ 100 MiB |\n' "$BENCH_SECTION" "$1" "$(thousands "$(sc_files "$2")")" "$sc_rss_last"
}

# The hook as Claude Code runs it (see 40-hook.sh): its own HOME, a 1 MiB transcript, the
# payloads Claude Code sends. sc_hook_setup NAME sets sc_hk_* for that tree.
sc_hook_setup() {
  local proj=$sc/$1
  sc_hk_home=$sc/hook-$1
  sc_hk_proj=$proj
  local sid=7c9a6a3e-1b7e-4b8e-9a51-0d6c1f5e2a10
  local tdir; tdir=$sc_hk_home/.claude/projects/$(printf '%s' "$proj" | sed 's/[^A-Za-z0-9]/-/g')
  mkdir -p "$sc_hk_home/.rewind" "$tdir" "$BENCH_DIR/jsonl"
  printf '{\n  "version": 1,\n  "tier": "balanced"\n}\n' > "$sc_hk_home/.rewind/config.json"
  [ -s "$BENCH_DIR/jsonl/t-1MiB.jsonl" ] || (cd "$REWIND_SRC/jsonl" && GOWORK=off go run ./internal/gentranscript -size 1MiB -o "$BENCH_DIR/jsonl/t-1MiB.jsonl")
  [ -s "$tdir/$sid.jsonl" ] || cp "$BENCH_DIR/jsonl/t-1MiB.jsonl" "$tdir/$sid.jsonl"
  local common='"session_id":"'$sid'","transcript_path":"'$tdir/$sid.jsonl'","cwd":"'$proj'","permission_mode":"default"'
  printf '{%s,"hook_event_name":"UserPromptSubmit","prompt":"Make fmt.Sprintf faster without changing its output."}\n' "$common" > "$sc_hk_home/prompt.json"
  printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s","old_string":"x","new_string":"x"},"tool_use_id":"toolu_01"}\n' \
    "$common" "$(sc_victim "$1")" > "$sc_hk_home/pre-edit.json"
  sc_hk_prompt="rewind-hook user-prompt-submit --agent claude < $sc_hk_home/prompt.json"
  sc_hk_pre="rewind-hook pre-tool-use --agent claude < $sc_hk_home/pre-edit.json"
}
# The hook's environment, inside a subshell only (the sections after this one keep HOME).
sc_hk_env() {
  unset REWIND_HOME CLAUDE_ENV_FILE FACTORY_PROJECT_DIR DROID_PROJECT_DIR
  export HOME=$sc_hk_home CLAUDE_PROJECT_DIR=$sc_hk_proj CLAUDECODE=1
}

printf 'files\tnoop_s\tone_s\tgit_s\tnoop_rss_mib\tone_rss_mib\tgit_rss_mib\n' > "$sc/curve.tsv.new"

# sc_curve NAME: the one-change and no-op checkpoints against git status, their rows, their
# peak RSS and the curve's line.
sc_curve() {
  local name=$1 t=$sc/$1 victim; victim=$(sc_victim "$1")
  local label; label="$(thousands "$(sc_files "$name")") files"
  sc_store "$name"
  (cd "$t" && git status --porcelain >/dev/null)
  # The 1M tree's runs take seconds each: fewer rounds there.
  local runs=$BENCH_RUNS warm=$PAIR_WARMUP
  [ "$name" != t1m ] || { BENCH_RUNS=$sc_runs PAIR_WARMUP=1; }
  sc_log "$name: one-change checkpoint against git status ($BENCH_RUNS rounds)"
  read -r sc_one sc_gst1 < <(median_pair "rewind -C $t save" "git -C $t status --porcelain" "echo '// layer' >> $victim")
  row "one-change checkpoint, $label" "$sc_one" "git status --porcelain" "$sc_gst1" "≤ 1.5×"
  sleep 2
  sc_log "$name: no-op checkpoint against git status"
  read -r sc_noop sc_gst < <(median_pair "rewind -C $t save" "git -C $t status --porcelain")
  row "no-op checkpoint, $label" "$sc_noop" "git status --porcelain" "$sc_gst" "≤ 1.2×"
  BENCH_RUNS=$runs PAIR_WARMUP=$warm
  sc_log "$name: peak RSS"
  sc_rss "git status --porcelain (reference)" "$name" "git -C $t status --porcelain"; local rg=$sc_rss_last
  sc_rss "no-op checkpoint" "$name" "rewind -C $t save"; local rn=$sc_rss_last
  echo '// layer' >> "$victim"
  sc_rss "one-change checkpoint" "$name" "rewind -C $t save"; local ro=$sc_rss_last
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(sc_files "$name")" "$sc_noop" "$sc_one" "$sc_gst" "$rn" "$ro" "$rg" >> "$sc/curve.tsv.new"
}

# sc_more NAME: the other figures at a size (restore, diff, hook, full checkpoint) and their
# peak RSS; TIMED (1 or 0) says whether to time them or only measure their memory.
sc_more() {
  local name=$1 timed=$2 t=$sc/$1 victim; victim=$(sc_victim "$1")
  local label; label="$(thousands "$(sc_files "$name")") files"
  local newest; newest=$(sc_newest "$name")
  local written
  written=$( (echo '// bench' >> "$victim"; rewind-snap restore --root "$t" --manifest "$newest") | sed -n 's/.*"written":\([0-9]*\).*/\1/p')
  [ "$written" = 1 ] || sc_fail "$name: restore after one change wrote ${written:-?} files, want 1"
  local restore="rewind-snap restore --root $t --manifest $newest"
  if [ "$timed" = 1 ]; then
    sc_log "$name: restore of the newest after one change"
    read -r rs gst < <(median_pair "$restore" "git -C $t status --porcelain" "echo '// bench' >> $victim")
    row "rewind-snap restore of the newest after one change (wrote $written file), $label" "$rs" "git status --porcelain" "$gst" "≤ 2×"
  fi
  echo '// diff' >> "$victim"
  local changed; changed=$(rewind -C "$t" diff @0 --stat)
  [ "$changed" = "M ${victim#"$t"/}" ] || sc_fail "$name: rewind diff --stat printed \"$changed\", want one M line"
  if [ "$timed" = 1 ]; then
    sc_log "$name: rewind diff of one change"
    read -r df gst < <(median_pair "rewind -C $t diff @0" "git -C $t status --porcelain")
    row "rewind diff of one change, $label" "$df" "git status --porcelain" "$gst" "≤ 1.5×"
  fi
  sc_hook_setup "$name"
  # A hook has a deadline (the tier's budget): past it the checkpoint is abandoned, which is a
  # figure here, not a failure of the section.
  local hk_err
  if ! hk_err=$( (sc_hk_env; eval "$sc_hk_prompt") 2>&1 >/dev/null); then
    printf '| %s | UserPromptSubmit hook checkpoint, %s | failed after %s ms: %s | | | | within the hook budget |\n' "$BENCH_SECTION" "$label" \
      "$(tail -n 1 "$sc_hk_home/.rewind/logs/hook.log" | sed -n 's/.*"ms":\([0-9]*\).*/\1/p')" "${hk_err//|/\\|}"
  fi
  sleep 2
  local create="rewind-snap create --root $t --out $sc/full.tar.gz --manifest $sc/full.m"
  local tarpigz="tar -C $t --exclude=./.git --exclude=./.agent -cf - . | pigz -1 > $sc/ref.tar.gz; sync $sc/ref.tar.gz"
  if [ "$timed" = 1 ]; then
    sc_log "$name: hook checkpoint, tree unchanged"
    read -r hp gst < <(sc_hk_env; median_pair "$sc_hk_prompt" "git -C $t status --porcelain")
    row "UserPromptSubmit hook checkpoint, tree unchanged, $label" "$hp" "git status --porcelain" "$gst" "≤ 1.5×"
    local noop; noop=$(sc_hk_env; median "$sc_hk_pre")
    grep -q '"event":"PreToolUse".*"reason":"interval"' "$sc_hk_home/.rewind/logs/hook.log" ||
      sc_fail "$name: the PreToolUse hook was not an anti-spam skip (see $sc_hk_home/.rewind/logs/hook.log)"
    row "no-op hook decision (PreToolUse inside the interval), $label" "$noop" "budget" "0.010" "< 10 ms"
    sc_log "$name: full checkpoint against tar | pigz -1 (BENCH_SCALE_RUNS=$sc_runs rounds)"
    local runs=$BENCH_RUNS warm=$PAIR_WARMUP
    BENCH_RUNS=$sc_runs PAIR_WARMUP=1
    read -r fc tp < <(median_pair "$create" "$tarpigz" "rm -f $sc/full.tar.gz $sc/full.m" "rm -f $sc/ref.tar.gz")
    BENCH_RUNS=$runs PAIR_WARMUP=$warm
    row "full checkpoint (rewind-snap create), $label" "$fc" "tar | pigz -1 > file; sync file" "$tp" "≤ 0.6×"
    rm -f "$sc/ref.tar.gz"
    # A whole archive restored into an empty folder (an import's, or rewind-snap restore --from
    # there) is written as it is read: against tar -xzf of the same archive. Both in memory
    # (tmpfs) where there is room: on this shared disk the same extraction took 35-72 s from one
    # run to the next, for either tool, which no ratio survives.
    local x=$sc/x where="disk"
    if [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((8 << 20)) ]; then
      x=/dev/shm/rewind-bench-x where="tmpfs"
    fi
    sc_log "$name: restore of a full archive into an empty folder ($where) against tar -xzf ($sc_runs rounds)"
    mkdir -p "$x.a"
    rewind-snap create --root "$t" --out "$x.a/full.tar.gz" >/dev/null
    BENCH_RUNS=$sc_runs PAIR_WARMUP=1
    read -r xr xt < <(median_pair "rewind-snap restore --root $x --from $x.a/full.tar.gz >/dev/null" \
      "tar -xzf $x.a/full.tar.gz -C $x" "rm -rf $x; mkdir $x" "rm -rf $x; mkdir $x")
    BENCH_RUNS=$runs PAIR_WARMUP=$warm
    row "restore of a full archive into an empty folder ($where; rewind-snap restore --from), $label" "$xr" "tar -xzf" "$xt" "≤ 1×"
    rm -rf "$x" "$x.a"
  fi
  sc_log "$name: peak RSS of restore, diff, hook, full checkpoint"
  echo '// bench' >> "$victim"
  sc_rss "rewind-snap restore after one change" "$name" "$restore"
  sc_rss "rewind diff of one change" "$name" "rewind -C $t diff @0"
  # shellcheck disable=SC2030,SC2031 # the hook's environment stays in these subshells
  (sc_hk_env; sc_rss "UserPromptSubmit hook checkpoint" "$name" "$sc_hk_prompt")
  # shellcheck disable=SC2030,SC2031
  (sc_hk_env; sc_rss "no-op hook decision" "$name" "$sc_hk_pre")
  rm -f "$sc/full.tar.gz" "$sc/full.m"
  sc_rss "full checkpoint (rewind-snap create)" "$name" "$create"
  rm -rf "$sc/x"; mkdir "$sc/x"
  sc_rss "restore of a full archive into an empty folder" "$name" "rewind-snap restore --root $sc/x --from $sc/full.tar.gz"
  diff -r --no-dereference -q -x .git -x .agent "$t" "$sc/x" >/dev/null ||
    sc_fail "$name: the archive restored into an empty folder differs from the tree"
  rm -rf "$sc/x" "$sc/full.tar.gz" "$sc/full.m"
  # The store's upkeep: validate reads every checkpoint whole; gc --keep 2 deletes the full
  # checkpoint the others are layers over, so it rewrites the oldest it keeps in full.
  local n; n=$(rewind -C "$t" list --json | grep -c '"id"')
  sc_log "$name: peak RSS of validate ($n checkpoints), gc --keep 2"
  sc_rss "rewind validate, $n checkpoints" "$name" "rewind -C $t validate"
  sc_rss "rewind gc --keep 2 of $n checkpoints" "$name" "rewind -C $t gc --keep 2"
  rewind -C "$t" validate >/dev/null || sc_fail "$name: rewind validate failed after gc --keep 2"
}

sc_curve t10k
sc_curve t100k
sc_curve t230k
sc_more t230k 1
sc_curve t1m
sc_more t1m 0
mv "$sc/curve.tsv.new" "$sc/curve.tsv"
(cd "$REWIND_SRC/rewind" && CGO_ENABLED=0 go build -trimpath -o "$BENCH_BIN/benchplot" ./internal/benchplot)
mkdir -p "$REWIND_SRC/docs"
benchplot < "$sc/curve.tsv" > "$REWIND_SRC/docs/scale.svg"
sc_log "curve: $sc/curve.tsv, plotted into docs/scale.svg"

# Correctness at 230k files: a chain of five checkpoints, each after a different step (change,
# add, delete, rename, two changes); restore the oldest, validate, gc --keep 2, validate, and
# restore each checkpoint left. After every restore the tree must be what it was when that
# checkpoint was taken, as git sees it: `git status` (untracked files too), `git diff` of the
# tracked files and the content of the untracked ones.
t=$sc/t230k
sc_fp() {
  (cd "$1" && git status --porcelain --untracked-files=all && git diff --binary &&
    git ls-files -o --exclude-standard -z | xargs -0r sha256sum) | sha256sum | cut -d' ' -f1
}
sc_id() { rewind -C "$t" list --json "$@" | grep -o '"id":"[^"]*"' | cut -d'"' -f4; }
# In a store of its own: the figures' store, kept in a BENCH_DIR between runs, holds an earlier
# run's restores in its history, whose checkpoints gc rightly keeps. It is put back at the end
# (or, after a run that failed, at the start of the next).
sc_kept=$sc/t230k-store.kept
if [ -d "$sc_kept" ]; then rm -rf "$t/.agent/rewind"; mv "$sc_kept" "$t/.agent/rewind"; fi
(cd "$t" && git checkout -q -- . && git clean -fdq)
mv "$t/.agent/rewind" "$sc_kept"
rewind -C "$t" init >/dev/null
sc_log "t230k: correctness, a chain of 5 checkpoints (a new store: the first is full)"
declare -A sc_fps=()
sc_step() {
  eval "$1"
  rewind -C "$t" save "scale chain $2" >/dev/null
  local id; id=$(sc_id -n 1)
  sc_fps[$id]=$(sc_fp "$t")
  sc_chain+=("$id")
}
sc_chain=()
sc_step "echo '// chain 1' >> $t/src01/fmt/print.go" 1
sc_step "printf 'package bytes\n\n// chain 2\n' > $t/src02/bytes/chain.go" 2
sc_step "rm $t/src03/strings/strings.go" 3
sc_step "mv $t/src04/bytes/buffer.go $t/src04/bytes/buffer_moved.go" 4
sc_step "echo '// chain 5' >> $t/src05/os/file.go; echo '// chain 5' >> $t/src01/fmt/print.go" 5
sc_last=${sc_fps[${sc_chain[4]}]}
# Every two states of the chain differ, or the checks below would prove nothing.
[ "$(printf '%s\n' "${sc_fps[@]}" | sort -u | wc -l)" = 5 ] || sc_fail "the chain's 5 states are not all different"

sc_restore_check() {
  rewind -C "$t" restore "$1" --code-only --yes >/dev/null || sc_fail "rewind restore $1 failed"
  [ "$(sc_fp "$t")" = "${sc_fps[$1]}" ] || sc_fail "after rewind restore $1 ($2) the tree differs from that checkpoint (git status: $(git -C "$t" status --porcelain | head -n 5 | tr '\n' ' '))"
  sc_log "t230k: restore $1 ($2): tree equal"
}
sc_restore_check "${sc_chain[0]}" "the oldest of the chain"
rewind -C "$t" validate >/dev/null || sc_fail "rewind validate failed after the restore"
sc_log "t230k: validate: ok"
# The restore took a backup checkpoint of the tree as it was: the chain's last state.
for id in $(sc_id); do [ -n "${sc_fps[$id]:-}" ] || sc_fps[$id]=$sc_last; done
rewind -C "$t" gc --keep 2 >/dev/null || sc_fail "rewind gc --keep 2 failed"
sc_left=$(sc_id)
[ "$(wc -w <<< "$sc_left")" = 2 ] || sc_fail "after gc --keep 2, $(wc -w <<< "$sc_left") checkpoints are left"
rewind -C "$t" validate >/dev/null || sc_fail "rewind validate failed after gc --keep 2"
sc_log "t230k: gc --keep 2, validate: ok"
for id in $sc_left; do sc_restore_check "$id" "kept by gc"; done
printf '| %s | correctness at %s files: chain of 5, restore oldest, validate, gc --keep 2, validate, restore the 2 it keeps (the newest, and the one the restore history needs) | all equal | git status + git diff | | | all |\n' \
  "$BENCH_SECTION" "$(thousands "$(sc_files t230k)")"
# Back to the commit and the figures' store, for the next run.
(cd "$t" && git checkout -q -- . && git clean -fdq)
rm -rf "$t/.agent/rewind"; mv "$sc_kept" "$t/.agent/rewind"
sc_log "done"
