# shellcheck shell=bash
# rewind export and import, beside the rewind section: a checkpoint of the 11k-file
# bench tree with a 1 MiB Claude transcript, exported against rewind-snap create of the same tree,
# imported into a new folder against a full restore of that snapshot into an empty one, and the
# archive's size against the compressed tree plus the compressed transcript.
# Sourced by scripts/bench: uses median_pair, row, goroot_repo, $BENCH_DIR, $REWIND_SRC.
ex=$BENCH_DIR/export; mkdir -p "$ex"
proj=$ex/goroot
goroot_repo "$proj"
[ -d "$proj/.agent/rewind" ] || rewind -C "$proj" init >/dev/null
[ -s "$ex/t.jsonl" ] || (cd "$REWIND_SRC/jsonl" && GOWORK=off go run ./internal/gentranscript -size 1MiB -o "$ex/t.jsonl")
rewind -C "$proj" save --full --transcript "$ex/t.jsonl" --agent claude >/dev/null
full=$(rewind -C "$proj" list --json -n 1 | sed -n 's/.*"id":"\([0-9_]*\)".*/\1/p' | head -1)

# A full checkpoint's archive already is the tree's: it is copied as it is.
read -r exp snapc < <(median_pair "rewind -C $proj export $full -o $ex/e.tar" \
  "rewind-snap create --root $proj --out $ex/s.tar.gz --manifest $ex/s.m" \
  "rm -f $ex/e.tar" "rm -f $ex/s.tar.gz $ex/s.m")
row "export of a full checkpoint (tree + 1 MiB transcript)" "$exp" "rewind-snap create" "$snapc" "≤ 1.2×"
# A layer's tree is read from its chain and written as one new full snapshot.
echo '// bench' >> "$proj/fmt/print.go"
rewind -C "$proj" save --transcript "$ex/t.jsonl" --agent claude >/dev/null
read -r expl snapc < <(median_pair "rewind -C $proj export @0 -o $ex/l.tar" \
  "rewind-snap create --root $proj --out $ex/s.tar.gz --manifest $ex/s.m" \
  "rm -f $ex/l.tar" "rm -f $ex/s.tar.gz $ex/s.m")
row "export of a layer checkpoint (one change over the full one)" "$expl" "rewind-snap create" "$snapc" "≤ 1.2×"

# Both write into a new folder; the import also makes its store, installs the session (under a
# HOME of its own) and records its checkpoint of the tree, as 'rewind import' does.
mkdir -p "$ex/home"
read -r imp rest < <(median_pair "env HOME=$ex/home rewind import $ex/e.tar --into $ex/imported" \
  "rewind-snap restore --root $ex/restored --from $ex/s.tar.gz" \
  "rm -rf $ex/imported $ex/home/.claude" "rm -rf $ex/restored; mkdir $ex/restored")
row "import into a new folder" "$imp" "rewind-snap restore (full, empty folder)" "$rest" "≤ 1.2×"

tar_b=$(stat -c %s "$ex/e.tar")
ref_b=$(( $(stat -c %s "$ex/s.tar.gz") + $(gzip -1 -c "$ex/t.jsonl" | wc -c) ))
printf "| %s | %s | %s B | %s | %s B | %s | %s |\n" "${BENCH_SECTION:-}" "archive size" "$tar_b" \
  "snapshot + gzip -1 of the transcript" "$ref_b" "$(awk -v a="$tar_b" -v b="$ref_b" 'BEGIN { printf "%.2f×", a/b }')" "≈ 1×"
