# shellcheck shell=bash
# rewind-snap on a copy of $(go env GOROOT)/src (about 11k files), page cache warm.
src=$(goroot_copy)
snapdir=$BENCH_DIR/snap; mkdir -p "$snapdir"
repo=$BENCH_DIR/goroot-git
goroot_repo "$repo"

# Each timed create writes a new archive, as a checkpoint does: replacing the one the run before
# wrote would add that file's deletion (about 6% here, inside the rename) to the figure.
create="rewind-snap create --root $src --out $snapdir/s.tar.gz --manifest $snapdir/s.m"
fresh="rm -f $snapdir/s.tar.gz $snapdir/s.m"
read -r ours pigz1 < <(median_pair "$create" "tar -C $src -cf - . | pigz -1 > /dev/null" "$fresh")
row "create, full snapshot" "$ours" "tar | pigz -1" "$pigz1" "≤ 0.6×"
read -r ours gzip1 < <(median_pair "$create" "tar -C $src -cf - . | gzip -1 > /dev/null" "$fresh")
row "create, full snapshot" "$ours" "tar | gzip -1" "$gzip1" "≤ 0.3×"
read -r ours cat0 < <(median_pair "$create" "tar -C $src -cf - . | cat > /dev/null" "$fresh")
row "create, full snapshot" "$ours" "tar | cat (read floor)" "$cat0" "report"

rewind-snap create --root "$repo" --out "$snapdir/g.tar.gz" --manifest "$snapdir/g.m" >/dev/null
sleep 2 # let the racy-git window pass, as it has between two real checkpoints
(cd "$repo" && git status --porcelain >/dev/null)
read -r ours gst < <(median_pair "rewind-snap create --root $repo --out $snapdir/g2.tar.gz --parent-manifest $snapdir/g.m" "git -C $repo status --porcelain")
row "create --parent-manifest, unchanged" "$ours" "git status --porcelain" "$gst" "≤ 1.5×"

# Restore after one file changed: the change is made before each timed run.
victim=$src/fmt/print.go
cp "$victim" "$snapdir/victim.orig"
written=$( (echo "// bench" >> "$victim"; rewind-snap restore --root "$src" --from "$snapdir/s.tar.gz") | sed -n 's/.*"written":\([0-9]*\).*/\1/p')
[ "$written" = 1 ] || echo "bench: warning: restore after one change wrote $written files, want 1" >&2
restore="rewind-snap restore --root $src --from $snapdir/s.tar.gz"
read -r ours gzd < <(median_pair "$restore" "gzip -dc $snapdir/s.tar.gz > /dev/null" "echo '// bench' >> $victim")
row "restore after one change (wrote $written file)" "$ours" "gzip -dc > /dev/null" "$gzd" "≤ 1.2×"
read -r ours pigzd < <(median_pair "$restore" "pigz -dc $snapdir/s.tar.gz > /dev/null" "echo '// bench' >> $victim")
row "restore after one change" "$ours" "pigz -dc > /dev/null" "$pigzd" "report"
cmp -s "$victim" "$snapdir/victim.orig" || echo "bench: warning: restore left $victim different" >&2

for c in "rewind-snap create --root $src --out $snapdir/r.tar.gz --manifest $snapdir/r.m" \
         "rewind-snap create --root $repo --out $snapdir/g3.tar.gz --parent-manifest $snapdir/g.m" \
         "rewind-snap restore --root $src --from $snapdir/s.tar.gz" \
         "rewind-snap diff --root $src --from $snapdir/s.tar.gz" \
         "rewind-snap ls --from $snapdir/s.tar.gz"; do
  sub=${c#rewind-snap }; sub=${sub%% *}
  printf '| %s | peak RSS, %s | %s MiB | | | | < 100 MiB |\n' "$BENCH_SECTION" "$sub" "$(peak_rss_mb "$c")"
done
