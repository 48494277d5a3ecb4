# shellcheck shell=bash
# Layered checkpoints: a checkpoint costs what changed. Whole processes on a copy of
# GOROOT/src in a git repository; the one-change case appends a line to one file.
# Sourced by scripts/bench: uses median, median_pair, row, goroot_copy, goroot_repo, $BENCH_DIR.
ly=$BENCH_DIR/layers; mkdir -p "$ly"
proj=$ly/goroot
goroot_repo "$proj"
if [ ! -d "$proj/.agent/rewind" ]; then
  rewind -C "$proj" init >/dev/null
  rewind -C "$proj" save base >/dev/null
fi
store=$proj/.agent/rewind
# The newest checkpoint: ids sort by time, and a glob sorts as ls does.
newest_checkpoint() { local c; for c in "$store"/checkpoints/*; do :; done; basename "$c"; }
(cd "$proj" && git status --porcelain >/dev/null)
victim=$proj/fmt/print.go

read -r one gst < <(median_pair "rewind -C $proj save" "git -C $proj status --porcelain" "echo '// layer' >> $victim")
row "one-change checkpoint (layer)" "$one" "git status --porcelain" "$gst" "≤ 2×"

# Disk of that last checkpoint: its layer, manifest (a delta) and metadata.
id=$(newest_checkpoint)
layer=$(stat -c %s "$store/layers/$id.tar.gz")
manifest=$(stat -c %s "$store/checkpoints/$id/manifest")
meta=$(stat -c %s "$store/checkpoints/$id/metadata.json")
changed=$(gzip -1 -c "$victim" | wc -c)
printf '| %s | disk per one-change checkpoint | %s B (layer %s + manifest delta %s + metadata %s) | 2 × changed file gzipped + manifest delta | %s B | %s | ≤ 1× |\n' \
  "$BENCH_SECTION" "$((layer + manifest + meta))" "$layer" "$manifest" "$meta" "$((2 * changed + manifest))" \
  "$(awk -v a=$((layer + manifest + meta)) -v b=$((2 * changed + manifest)) 'BEGIN { printf "%.2f×", a/b }')"

sleep 2 # past the racy window, as between two real checkpoints
read -r noop gst < <(median_pair "rewind -C $proj save" "git -C $proj status --porcelain")
row "no-op checkpoint (unchanged)" "$noop" "git status --porcelain" "$gst" "≤ 1.5×"

# Restore of the newest checkpoint after one change: the restore proper (rewind-snap through
# the manifest) and the porcelain's, which first takes its backup checkpoint.
newest=$store/checkpoints/$(newest_checkpoint)/manifest
written=$( (echo '// bench' >> "$victim"; rewind-snap restore --root "$proj" --manifest "$newest") | sed -n 's/.*"written":\([0-9]*\).*/\1/p')
read -r rs gst < <(median_pair "rewind-snap restore --root $proj --manifest $newest" "git -C $proj status --porcelain" "echo '// bench' >> $victim")
row "restore newest after one change (wrote $written file)" "$rs" "git status --porcelain" "$gst" "≤ 2×"
read -r rp gst < <(median_pair "rewind -C $proj restore @0 --code-only --yes" "git -C $proj status --porcelain" "echo '// bench' >> $victim")
row "same, rewind restore (with its backup checkpoint)" "$rp" "git status --porcelain" "$gst" "report"

# The oldest checkpoint of a 50-deep chain, against restoring a full snapshot of the same tree.
chain=$ly/chain; rm -rf "$chain"; mkdir -p "$chain"
files=$(cd "$proj" && git ls-files '*.go' | awk 'NR % 97 == 0' | head -n 50)
rewind -C "$proj" save --full "chain start" >/dev/null
oldest=$store/checkpoints/$(newest_checkpoint)/manifest
rewind-snap create --root "$proj" --out "$chain/full.tar.gz" >/dev/null
for f in $files; do echo "// chain" >> "$proj/$f"; rewind -C "$proj" save >/dev/null; done
top=$store/checkpoints/$(newest_checkpoint)/manifest
depth=$(sed -n '1s/.*"depth":\([0-9]*\).*/\1/p' "$top")
read -r old full < <(median_pair "rewind-snap restore --root $proj --manifest $oldest" "rewind-snap restore --root $proj --from $chain/full.tar.gz" \
  "rewind-snap restore --root $proj --manifest $top >/dev/null" "rewind-snap restore --root $proj --manifest $top >/dev/null")
row "restore oldest of a $depth-deep chain" "$old" "restore a full snapshot (same tree)" "$full" "≤ 1.5×"
rewind-snap restore --root "$proj" --manifest "$top" >/dev/null

# 200 checkpoints of random small edits; every 10th is checked against a full snapshot taken
# at the same moment.
long=$ly/long; rm -rf "$long"; mkdir -p "$long"
before=$(du -sb "$store" | cut -f1)
all=$(cd "$proj" && git ls-files '*.go')
nall=$(echo "$all" | wc -l)
changed_bytes=0
start=$(date +%s.%N)
for i in $(seq 1 200); do
  f=$(echo "$all" | sed -n "$(( (i * 7919) % nall + 1 ))p")
  line="// edit $i"
  echo "$line" >> "$proj/$f"; changed_bytes=$((changed_bytes + ${#line} + 1))
  rewind -C "$proj" save >/dev/null
  if [ $((i % 10)) = 0 ]; then
    echo "$store/checkpoints/$(newest_checkpoint)/manifest" >> "$long/list"
    rewind-snap create --root "$proj" --out "$long/full-$i.tar.gz" >/dev/null
    echo "$long/full-$i.tar.gz" >> "$long/fulls"
  fi
done
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
after=$(du -sb "$store" | cut -f1)
ok=0; n=0
while read -r m && read -r f <&3; do
  n=$((n + 1))
  rewind-snap restore --root "$proj" --manifest "$m" >/dev/null
  [ -z "$(rewind-snap diff --root "$proj" --from "$f")" ] && ok=$((ok + 1))
done < "$long/list" 3< "$long/fulls"
rewind-snap restore --root "$proj" --manifest "$(tail -n 1 "$long/list")" >/dev/null
fullsize=$(stat -c %s "$chain/full.tar.gz")
printf '| %s | 200 checkpoints of small edits: store growth | %s B (%s s, %s B of edits) | one full snapshot | %s B | %s | small multiple of what changed |\n' \
  "$BENCH_SECTION" "$((after - before))" "$(printf %.1f "$secs")" "$changed_bytes" "$fullsize" "$(awk -v a=$((after - before)) -v b="$fullsize" 'BEGIN { printf "%.2f×", a/b }')"
printf '| %s | every 10th of the 200 restored, compared with a full snapshot | %s of %s byte-exact | | | | all |\n' "$BENCH_SECTION" "$ok" "$n"
