# shellcheck shell=bash
# Shared helpers for scripts/bench sections (sourced, not run).
#   bench_setup            installs hyperfine and GNU time if missing, builds the binaries into $BENCH_BIN
#   median CMD [PREPARE]   median wall seconds of a shell command over $BENCH_RUNS runs (2 warm-ups);
#                          PREPARE runs before each (untimed)
#   median_pair OURS REF [PREP_OURS] [PREP_REF]   "OURS REF" medians, the two timed in alternation
#                          (for every figure given as a ratio)
#   peak_rss_mb CMD        peak resident set size of one run, in MiB
#   row FIGURE OURS REFNAME REF TARGET   prints one table row with the ratio OURS/REF
#   goroot_copy            a copy of $(go env GOROOT)/src under $BENCH_DIR (made once), printed
#   goroot_repo DIR        that copy at DIR as a git repository (made once)

bench_setup() {
  BENCH_RUNS=${BENCH_RUNS:-7}
  if [ -z "${BENCH_DIR:-}" ]; then
    BENCH_DIR=$(mktemp -d /tmp/rewind-bench.XXXXXX)
    trap 'rm -rf "$BENCH_DIR"' EXIT
  fi
  mkdir -p "$BENCH_DIR"
  local need=()
  command -v hyperfine >/dev/null || need+=(hyperfine)
  [ -x /usr/bin/time ] || need+=(time)
  command -v pigz >/dev/null || need+=(pigz)
  if [ ${#need[@]} -gt 0 ]; then
    echo "bench: installing ${need[*]}" >&2
    (apt-get update -qq && apt-get install -y -qq "${need[@]}") >/dev/null
  fi
  BENCH_BIN=$BENCH_DIR/bin
  mkdir -p "$BENCH_BIN"
  for main in "$REWIND_SRC"/*/cmd/*/main.go; do
    local pkg; pkg=$(dirname "$main")
    (cd "$REWIND_SRC" && CGO_ENABLED=0 go build -trimpath -o "$BENCH_BIN/$(basename "$pkg")" "./${pkg#"$REWIND_SRC"/}")
  done
  export PATH="$BENCH_BIN:$PATH"
}

# timed COLUMN CMD PREPARE HYPERFINE_ARGS...: hyperfine on CMD (without a shell when it can, else
# through one; PREPARE, if not empty, before each run, untimed), printing COLUMN of its CSV row
# (2: mean, 4: median) in seconds.
timed() {
  local col=$1 cmd=$2 prepare=$3; shift 3
  local csv; csv=$(mktemp "$BENCH_DIR/hf.XXXXXX")
  # With -N hyperfine runs --prepare without a shell too: give it a script, so redirections work.
  local prep=() ps=
  if [ -n "$prepare" ]; then
    ps=$(mktemp "$BENCH_DIR/prep.XXXXXX")
    printf '%s\n' "$prepare" > "$ps"
    prep=(--prepare "bash $ps")
  fi
  hyperfine -N --style none "$@" "${prep[@]}" --export-csv "$csv" -- "$cmd" >/dev/null 2>&1 \
    || hyperfine --style none "$@" "${prep[@]}" --export-csv "$csv" -- "$cmd" >/dev/null
  awk -F, -v c="$col" 'NR==2 {print $c}' "$csv"
  rm -f "$csv" ${ps:+"$ps"}
}

median() { timed 4 "$1" "${2:-}" --warmup 2 --runs "$BENCH_RUNS"; }

# one CMD [PREPARE]: wall seconds of a single run (PREPARE before it, untimed).
one() { timed 2 "$1" "${2:-}" --runs 1 2>/dev/null; }

# median_pair OURS REF [PREPARE_OURS] [PREPARE_REF]: prints "OURS_MEDIAN REF_MEDIAN", the two
# commands timed in alternation, one run of each per round over $BENCH_RUNS rounds after
# $PAIR_WARMUP warm-up rounds. This machine's speed drifts by up to 2× over minutes (a shared
# host); timed in two separate blocks, a figure and its reference can land in different moments,
# alternated they share them, so the ratio holds. The warm-up rounds matter too: the host
# reclaims an idle VM's caches within seconds, so the first walks of a tree set up (or left
# alone) a moment ago are up to 3× slower than the ones after.
PAIR_WARMUP=3
median_pair() {
  local a=() b=() i
  for ((i = 0; i < PAIR_WARMUP; i++)); do
    one "$1" "${3:-}" >/dev/null; one "$2" "${4:-}" >/dev/null
  done
  for ((i = 0; i < BENCH_RUNS; i++)); do
    a+=("$(one "$1" "${3:-}")")
    b+=("$(one "$2" "${4:-}")")
  done
  printf '%s %s\n' "$(printf '%s\n' "${a[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
    "$(printf '%s\n' "${b[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')"
}

peak_rss_mb() {
  /usr/bin/time -f '%M' -o "$BENCH_DIR/rss" bash -c "$1" >/dev/null 2>&1
  awk '{printf "%.1f", $1/1024}' "$BENCH_DIR/rss"
}

fmt_s() { awk -v s="$1" 'BEGIN { if (s < 1) printf "%.1f ms", s*1000; else printf "%.2f s", s }'; }

row() {
  local figure=$1 ours=$2 refname=$3 ref=$4 target=$5
  local ratio; ratio=$(awk -v a="$ours" -v b="$ref" 'BEGIN { if (b > 0) printf "%.2f×", a/b; else print "-" }')
  printf "| %s | %s | %s | %s | %s | %s | %s |\n" "${BENCH_SECTION:-}" "$figure" "$(fmt_s "$ours")" "${refname//|/\\|}" "$(fmt_s "$ref")" "$ratio" "$target"
}

goroot_copy() {
  local dst=$BENCH_DIR/goroot-src
  if [ ! -d "$dst" ]; then
    cp -r "$(go env GOROOT)/src" "$dst"
    sync # see goroot_repo
  fi
  echo "$dst"
}

# goroot_repo DIR: a copy of goroot_copy at DIR made a git repository with one commit and a fresh
# index (once). Both write a few hundred MB; the sync lets that reach the disk before anything is
# timed, or the first fsyncs measured wait behind the set-up's writeback. Automatic gc is off: a
# commit of 11k loose objects would start a detached `git gc` that packs them on both cores for
# the next 20 s, under the figures measured then.
goroot_repo() {
  local dst=$1
  if [ ! -d "$dst/.git" ]; then
    cp -r "$(goroot_copy)" "$dst"
    (cd "$dst" && git init -q && git config gc.auto 0 && git config maintenance.auto false && git add -A &&
      git -c user.name=b -c user.email=b@b commit -qm bench && git status --porcelain >/dev/null)
    sync
  fi
}
