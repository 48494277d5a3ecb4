#!/usr/bin/env bash
# install.sh: build every Rewind binary with the local Go and install it.
#
#   ./install.sh [--prefix DIR] [--bin-dir DIR] [--uninstall]
#
# Binaries go to DIR/bin (default ~/.rewind/system/bin) and are linked into --bin-dir (default
# ~/.local/bin). Re-running upgrades in place; nothing outside those two folders is touched.
set -euo pipefail

prefix="$HOME/.rewind/system"
bindir="$HOME/.local/bin"
uninstall=0

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; }
die() { printf 'install.sh: error: %s\n' "$1" >&2; [ -n "${2:-}" ] && printf 'install.sh: hint: %s\n' "$2" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a directory"; bindir=$2; shift 2 ;;
    --bin-dir=*) bindir=${1#*=}; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" "see ./install.sh --help" ;;
  esac
done

src=$(cd "$(dirname "$0")" && pwd)
binaries=()
for main in "$src"/*/cmd/*/main.go; do
  [ -f "$main" ] && binaries+=("$(basename "$(dirname "$main")")")
done

if [ "$uninstall" = 1 ]; then
  for b in "${binaries[@]}"; do
    if [ -L "$bindir/$b" ] && [ "$(readlink "$bindir/$b")" = "$prefix/bin/$b" ]; then rm -f "$bindir/$b"; fi
    rm -f "$prefix/bin/$b"
  done
  echo "install.sh: removed ${#binaries[@]} binaries from $prefix/bin and their links in $bindir"
  exit 0
fi

command -v go >/dev/null || die "Go not found on PATH" "install Go 1.25 or newer (https://go.dev/dl/) and re-run"
gov=$(go env GOVERSION); gov=${gov#go}
major=${gov%%.*}; rest=${gov#*.}; minor=${rest%%[!0-9]*}
if [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "${minor:-0}" -lt 25 ]; }; then
  die "Go $gov is too old; Rewind needs Go 1.25 or newer" "install a newer Go (https://go.dev/dl/) and re-run"
fi

version=$(git -C "$src" describe --always --dirty 2>/dev/null || echo dev)
ldflags="-s -w"
for cli in "$src"/*/cli; do
  mod=$(basename "$(dirname "$cli")")
  ldflags="$ldflags -X rewind.dev/$mod/cli.Version=$version"
done

mkdir -p "$prefix/bin" "$bindir"
for main in "$src"/*/cmd/*/main.go; do
  pkgdir=$(dirname "$main"); b=$(basename "$pkgdir")
  # Build to a temp name and rename, so a running hook never sees a half-written binary.
  (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$prefix/bin/.$b.tmp" "./${pkgdir#"$src"/}")
  mv -f "$prefix/bin/.$b.tmp" "$prefix/bin/$b"
  ln -sfn "$prefix/bin/$b" "$bindir/$b"
done

echo "install.sh: installed ${binaries[*]} ($version) into $prefix/bin, linked from $bindir"
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "install.sh: note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
