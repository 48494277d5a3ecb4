#!/usr/bin/env bash
# install.sh: install every Rewind binary, and turn on automatic checkpoints in your agents.
#
#   ./install.sh [--tier minimal|balanced|aggressive] [--agents LIST|all|none] [--yes]
#                [--statusline] [--prefix DIR] [--bin-dir DIR] [--uninstall]
#                [--from URL|FILE [--sha256 HEX | --checksums URL|FILE]]
#
# Where the binaries come from: in a clone of the repository, it builds them with the local Go
# (1.25 or newer); in an unpacked release archive (rewind_VERSION_OS_ARCH, the binaries beside
# this script), it copies them, and needs no Go. --from takes a release archive (a URL, which
# curl or wget downloads, or a file), checks its SHA-256 against the release's checksums.txt
# (by default the one beside the archive; --checksums names another; --sha256 gives the sum
# itself) before it unpacks anything, refuses it when they differ, and installs from it.
#
# Binaries go to DIR/bin (default ~/.rewind/system/bin) and are linked into --bin-dir (default
# ~/.local/bin, created if missing; when it is not on PATH, the note at the end says how to add
# it); the man pages go to DIR/share/man/man1 and are linked into the share/man/man1 beside
# --bin-dir (~/.local/share/man/man1), where `man` looks for the commands it finds on PATH (Linux's
# man-db and macOS's man both do, unless a MANPATH with no empty entry replaces that search; then
# it says so). Shell completions (rewind completion) go where bash-completion, zsh and fish look
# for a user's own: ~/.local/share/bash-completion/completions/rewind, and for the shells that are
# installed ~/.local/share/zsh/site-functions/_rewind (on zsh's fpath once ~/.zshrc puts that
# folder there; a note says so) and ~/.config/fish/completions/rewind.fish.
# The tier goes to ~/.rewind/config.json (default: the one there, else balanced).
# Hooks are registered (absolute paths to rewind-hook) in the settings of the agents found, or
# of those named by --agents (claude, droid, codex, gemini, copilot, pi, opencode): each agent's
# own hook file, or for pi and OpenCode, which have no shell hooks, a bridge file in their
# extension folder. On a terminal it asks first; --yes registers without asking; with
# neither it registers nothing and says how. --statusline sets Claude Code's statusLine to
# `rewind statusline` when none is configured. Re-running upgrades in place; --uninstall
# removes the hooks, the status line it set, the binaries, the man pages and their links, and the
# completions.
# It runs on macOS's bash 3.2 and BSD tools as on Linux (scripts/install-check proves it).
set -euo pipefail

prefix="$HOME/.rewind/system"
bindir="$HOME/.local/bin"
uninstall=0 yes=0 statusline=0 tier="" agents="" from="" sha256="" checksums=""

usage() { sed -n '2,/^[^#]/p' "$0" | sed -e '/^#/!d' -e 's/^# \{0,1\}//'; }
die() { printf 'install.sh: error: %s\n' "$1" >&2; [ -n "${2:-}" ] && printf 'install.sh: hint: %s\n' "$2" >&2; exit 1; }
say() { printf 'install.sh: %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a directory"; bindir=$2; shift 2 ;;
    --bin-dir=*) bindir=${1#*=}; shift ;;
    --tier) [ $# -ge 2 ] || die "--tier needs minimal, balanced or aggressive"; tier=$2; shift 2 ;;
    --tier=*) tier=${1#*=}; shift ;;
    --agents) [ $# -ge 2 ] || die "--agents needs a list of agents (e.g. claude,codex), all or none"; agents=$2; shift 2 ;;
    --agents=*) agents=${1#*=}; shift ;;
    --yes|-y) yes=1; shift ;;
    --statusline) statusline=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    --from) [ $# -ge 2 ] || die "--from needs the URL or file of a release archive"; from=$2; shift 2 ;;
    --from=*) from=${1#*=}; shift ;;
    --sha256) [ $# -ge 2 ] || die "--sha256 needs the archive's SHA-256 (64 hex digits)"; sha256=$2; shift 2 ;;
    --sha256=*) sha256=${1#*=}; shift ;;
    --checksums) [ $# -ge 2 ] || die "--checksums needs the URL or file of the release's checksums.txt"; checksums=$2; shift 2 ;;
    --checksums=*) checksums=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" "see ./install.sh --help" ;;
  esac
done
case "$tier" in ""|minimal|balanced|aggressive) ;; *) die "unknown tier: $tier" "use minimal, balanced or aggressive" ;; esac
case "$prefix" in /*) ;; *) prefix=$PWD/$prefix ;; esac
case "$bindir" in /*) ;; *) bindir=$PWD/$bindir ;; esac

if [ -z "$from" ] && { [ -n "$sha256" ] || [ -n "$checksums" ]; }; then
  die "--sha256 and --checksums check the archive of --from" "add --from URL-or-FILE"
fi
[ -z "$sha256" ] || [ -z "$checksums" ] || die "--sha256 and --checksums exclude each other" "give one"
[ -z "$from" ] || [ "$uninstall" = 0 ] || die "--uninstall takes no --from" "run ./install.sh --uninstall"

# sha256 FILE prints the file's SHA-256 in hex, with what the system has: shasum on macOS (and
# on most Linux systems), else sha256sum, else openssl.
sha256() {
  if command -v shasum >/dev/null; then shasum -a 256 "$1"
  elif command -v sha256sum >/dev/null; then sha256sum "$1"
  elif command -v openssl >/dev/null; then openssl dgst -sha256 -r "$1"
  else return 1
  fi | sed 's/[[:space:]].*//'
}

# fetch URL-or-FILE DEST copies a file:// URL or a file to DEST, or downloads any other URL with
# curl or wget. Nothing fetched is ever run by a shell.
fetch() {
  case "$1" in
    file://*) cp "${1#file://}" "$2" || die "could not read $1" ;;
    *://*)
      if command -v curl >/dev/null; then curl -fsSL -o "$2" "$1" || die "could not download $1 (curl)"
      elif command -v wget >/dev/null; then wget -q -O "$2" "$1" || die "could not download $1 (wget)"
      else die "neither curl nor wget is installed to download $1" "install one, or download the archive and its checksums.txt yourself and give their files"
      fi ;;
    *) [ -f "$1" ] || die "no such file: $1"; cp "$1" "$2" ;;
  esac
}

# --from: the archive is fetched into a temporary folder, checked, and only then unpacked; the
# binaries are installed from the folder it holds.
if [ -n "$from" ]; then
  name=${from##*/}
  name=${name%%\?*}
  case "$name" in
    rewind_*.tar.gz) top=${name%.tar.gz} ;;
    *) die "$from is not a Rewind release archive (rewind_VERSION_OS_ARCH.tar.gz)" "give the archive of your system from the release" ;;
  esac
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/rewind-install.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  fetch "$from" "$tmp/$name"
  if [ -n "$sha256" ]; then
    want=$(printf '%s' "$sha256" | tr 'A-F' 'a-f')
    case "$want" in
      *[!0-9a-f]*) die "--sha256 $sha256 is not a SHA-256 (64 hex digits)" ;;
    esac
    [ ${#want} = 64 ] || die "--sha256 $sha256 is not a SHA-256 (64 hex digits)"
  else
    if [ -z "$checksums" ]; then
      case "$from" in */*) checksums=${from%/*}/checksums.txt ;; *) checksums=checksums.txt ;; esac
    fi
    fetch "$checksums" "$tmp/checksums.txt"
    want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1; exit }' "$tmp/checksums.txt")
    [ -n "$want" ] || die "$checksums has no line for $name" "give the checksums.txt of the release the archive is from, or --sha256 HEX"
  fi
  got=$(sha256 "$tmp/$name") || die "no shasum, sha256sum or openssl to check $name with" "install one of them"
  if [ "$got" != "$want" ]; then
    die "$name is not the archive that was released: its SHA-256 is $got, not $want; nothing was unpacked or installed" \
      "download it again; if it still differs, do not use it"
  fi
  say "$name: SHA-256 $got, as ${sha256:+given}${checksums:+$checksums says}"
  mkdir "$tmp/unpacked"
  (cd "$tmp/unpacked" && gzip -dc "../$name" | tar -xf -) || die "could not unpack $name"
  src=$tmp/unpacked/$top
  if ! { [ -f "$src/rewind" ] && [ -x "$src/rewind" ]; }; then
    die "$name holds no $top/rewind: not a Rewind release archive"
  fi
else
  src=$(cd "$(dirname "$0")" && pwd)
fi
mandir=$prefix/share/man/man1
manlinks=$(dirname "$bindir")/share/man/man1
bashcomp=${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions
zshcomp=${XDG_DATA_HOME:-$HOME/.local/share}/zsh/site-functions
fishcomp=${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions
# Where the binaries come from: an unpacked release archive holds them beside install.sh; a
# clone holds their sources (every */cmd/rewind*/main.go), built below with Go.
binaries=()
if [ -f "$src/rewind" ] && [ -x "$src/rewind" ]; then
  from_archive=1
  for b in "$src"/rewind*; do
    [ -f "$b" ] && [ -x "$b" ] && binaries+=("$(basename "$b")")
  done
else
  from_archive=0
  for main in "$src"/*/cmd/rewind*/main.go; do
    [ -f "$main" ] && binaries+=("$(basename "$(dirname "$main")")")
  done
fi
# Before bash 4.4 (macOS has 3.2), "${binaries[@]}" of an empty array is an unbound variable.
[ ${#binaries[@]} -gt 0 ] || die "no Rewind binaries or sources beside install.sh (no $src/rewind, no $src/*/cmd/rewind*/main.go)" \
  "run the install.sh of an unpacked release archive or of a Rewind clone, or give --from a release archive"
hook=$prefix/bin/rewind-hook

# report turns rewind-hook's JSON lines into sentences.
report() {
  local line type agent path changed backup skipped error
  while IFS= read -r line; do
    type=$(printf '%s' "$line" | sed -n 's/.*"type":"\([^"]*\)".*/\1/p')
    agent=$(printf '%s' "$line" | sed -n 's/.*"agent":"\([^"]*\)".*/\1/p')
    path=$(printf '%s' "$line" | sed -n 's/.*"target":"\([^"]*\)".*/\1/p')
    changed=$(printf '%s' "$line" | sed -n 's/.*"changed":\([a-z]*\).*/\1/p')
    backup=$(printf '%s' "$line" | sed -n 's/.*"backup":"\([^"]*\)".*/\1/p')
    skipped=$(printf '%s' "$line" | sed -n 's/.*"skipped":"\([^"]*\)".*/\1/p')
    error=$(printf '%s' "$line" | sed -n 's/.*"error":"\(.*\)"}$/\1/p')
    if [ -n "$error" ]; then say "$type $agent: left $path as it was: $error"
    elif [ -n "$skipped" ]; then say "$type $agent: skipped ($skipped)"
    elif [ "$changed" = true ]; then say "$type $agent: updated $path${backup:+ (previous version in $backup)}"
    else say "$type $agent: $path already up to date"
    fi
  done
}

if [ "$uninstall" = 1 ]; then
  # Uninstall leaves nothing it made but the checkpoints and their records (~/.rewind/storage,
  # stores, projects, .agent/rewind in the projects) and ~/.rewind/config.json. An agent whose
  # hook file cannot be read keeps its entries, and says so; every other agent's hooks (and the
  # files and folders Rewind made for them), the binaries and the man pages go all the same.
  hooks_left=0
  if [ -x "$hook" ]; then
    # Only what it changed is told: an agent with nothing of Rewind's is "skipped" by rewind-hook.
    "$hook" unregister --agents all | { grep -v '"skipped":' || true; } | report || hooks_left=1
  fi
  # The titles Rewind wrote into an agent's index of sessions (Codex's session_index.jsonl) for
  # forks that are gone.
  if [ -x "$prefix/bin/rewind" ]; then
    "$prefix/bin/rewind" forks prune | sed 's/^/install.sh: /' \
      || say "note: the titles of gone forks are left in the agents' session indexes (rewind forks prune failed)"
  fi
  for b in "${binaries[@]}"; do
    if [ -L "$bindir/$b" ] && [ "$(readlink "$bindir/$b")" = "$prefix/bin/$b" ]; then rm -f "$bindir/$b"; fi
    rm -f "$prefix/bin/$b"
  done
  for page in "$src"/man/*.1; do
    p=$(basename "$page")
    if [ -L "$manlinks/$p" ] && [ "$(readlink "$manlinks/$p")" = "$mandir/$p" ]; then rm -f "$manlinks/$p"; fi
    rm -f "$mandir/$p"
  done
  # The completions, and the links that load them for the plumbing tools' names.
  rm -f "$bashcomp/rewind" "$zshcomp/_rewind" "$fishcomp/rewind.fish"
  for b in "${binaries[@]}"; do
    if [ -L "$bashcomp/$b" ] && [ "$(readlink "$bashcomp/$b")" = rewind ]; then rm -f "$bashcomp/$b"; fi
    if [ -L "$fishcomp/$b.fish" ] && [ "$(readlink "$fishcomp/$b.fish")" = rewind.fish ]; then rm -f "$fishcomp/$b.fish"; fi
  done
  say "removed the shell completions from $bashcomp, $zshcomp and $fishcomp"
  # The folders it made for them, left empty: only in Rewind's own ~/.rewind/system (a --prefix
  # elsewhere, /usr/local say, is shared); and the hooks' log.
  if [ "$prefix" = "$HOME/.rewind/system" ]; then
    for d in "$mandir" "$prefix/share/man" "$prefix/share" "$prefix/bin" "$prefix"; do
      rmdir "$d" 2>/dev/null || true
    done
  fi
  rm -rf "$HOME/.rewind/logs"
  say "removed ${#binaries[@]} binaries from $prefix/bin and their links in $bindir, and the man pages"
  say "checkpoint stores (~/.rewind/storage/, .agent/rewind in your projects), their records and ~/.rewind/config.json are left in place"
  if [ "$hooks_left" = 1 ]; then
    die "Rewind's hooks are left in the file named above: it could not be read" \
      "fix it by hand, then take out the entries that run $hook (or run ./install.sh --yes, then ./install.sh --uninstall again)"
  fi
  exit 0
fi

mkdir -p "$prefix/bin" "$bindir"
if [ "$from_archive" = 1 ]; then
  for b in "${binaries[@]}"; do
    # Copied to a temp name and renamed, so a running hook never sees a half-written binary.
    cp "$src/$b" "$prefix/bin/.$b.tmp"
    chmod 755 "$prefix/bin/.$b.tmp"
    mv -f "$prefix/bin/.$b.tmp" "$prefix/bin/$b"
    ln -sfn "$prefix/bin/$b" "$bindir/$b"
  done
else
  command -v go >/dev/null || die "Go not found on PATH" "install Go 1.25 or newer (https://go.dev/dl/) and re-run"
  gov=$(go env GOVERSION); gov=${gov#go}
  major=${gov%%.*}; rest=${gov#*.}; minor=${rest%%[!0-9]*}
  if [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "${minor:-0}" -lt 25 ]; }; then
    die "Go $gov is too old; Rewind needs Go 1.25 or newer" "install a newer Go (https://go.dev/dl/) and re-run"
  fi

  # One version for every tool, the one rewind.dev/internal/cmdline holds: a build from a clone
  # is dev-<commit> ("-dirty" when the tree has changes), and --version adds the commit's date.
  commit=$(git -C "$src" describe --always --dirty --abbrev=40 --exclude='*' 2>/dev/null || true)
  date=$(TZ=UTC0 git -C "$src" log -1 --format=%cd --date=short-local 2>/dev/null || true)
  ldflags="-s -w -X rewind.dev/internal/cmdline.Commit=$commit -X rewind.dev/internal/cmdline.Date=$date"

  # Static binaries: nothing here needs C, and without the dynamic loader and libc every `rewind`
  # starts about 2.5 ms sooner (11.5 → 9.0 ms for `rewind statusline`, which runs on every
  # status-bar refresh). archive/tar and uuid pull in os/user and net, which link libc otherwise.
  export CGO_ENABLED=0
  for main in "$src"/*/cmd/rewind*/main.go; do
    pkgdir=$(dirname "$main"); b=$(basename "$pkgdir")
    # Build to a temp name and rename, so a running hook never sees a half-written binary.
    # Through go.work (whatever GOWORK says in this shell): the go.mod files require their
    # siblings at v0.0.0, which only go.work maps to the folders beside it.
    (cd "$src" && GOWORK="$src/go.work" go build -trimpath -ldflags "$ldflags" -o "$prefix/bin/.$b.tmp" "./${pkgdir#"$src"/}")
    mv -f "$prefix/bin/.$b.tmp" "$prefix/bin/$b"
    ln -sfn "$prefix/bin/$b" "$bindir/$b"
  done
fi
version=$("$prefix/bin/rewind" --version | cut -d' ' -f2)
say "installed ${binaries[*]} ($version) into $prefix/bin, linked from $bindir"

# Man pages where man finds them: man looks in the share/man beside each folder on PATH, so
# the pages are linked into the one beside --bin-dir (without them 'man rewind' opens the C
# library's rewind(3)).
mkdir -p "$mandir" "$manlinks"
for page in "$src"/man/*.1; do
  p=$(basename "$page")
  cp "$page" "$mandir/.$p.tmp"
  mv -f "$mandir/.$p.tmp" "$mandir/$p"
  ln -sfn "$mandir/$p" "$manlinks/$p"
done
say "installed the man pages into $mandir, linked from $manlinks"
if command -v man >/dev/null; then
  page=$(PATH="$bindir:$PATH" man -w rewind 2>/dev/null | head -n 1 || true)
  case "$page" in
    "$manlinks"/*|"$mandir"/*) ;;
    *) say "note: 'man rewind' finds ${page:-no page} here, not Rewind's (MANPATH=${MANPATH:-unset}); add $(dirname "$manlinks") to MANPATH, or read man $mandir/rewind.1" ;;
  esac
fi

# Shell completions, written by the rewind just installed: bash's always, zsh's and fish's when
# that shell is installed. bash-completion and fish load a command's file when the command is
# first completed, by its name: the plumbing tools' names are links to rewind's file, which
# completes all five. zsh reads the files on its fpath at compinit (#compdef names the five);
# ~/.local/share/zsh/site-functions is on it only when ~/.zshrc puts it there.
shells=bash
for sh in zsh fish; do
  if command -v "$sh" >/dev/null; then shells="$shells $sh"; fi
done
for sh in $shells; do
  case "$sh" in
    bash) dir=$bashcomp file=rewind link=%s ;;
    zsh) dir=$zshcomp file=_rewind link="" ;;
    fish) dir=$fishcomp file=rewind.fish link=%s.fish ;;
  esac
  mkdir -p "$dir"
  "$prefix/bin/rewind" completion "$sh" >"$dir/.$file.tmp"
  mv -f "$dir/.$file.tmp" "$dir/$file"
  for b in "${binaries[@]}"; do
    # shellcheck disable=SC2059 # $link is the format of the link's name
    if [ -n "$link" ] && [ "$b" != rewind ]; then ln -sfn "$file" "$dir/$(printf "$link" "$b")"; fi
  done
  say "installed the $sh completion into $dir"
done
case "${SHELL:-}" in
  */zsh) grep -qsF "$zshcomp" "$HOME/.zshrc" || grep -qsF '.local/share/zsh/site-functions' "$HOME/.zshrc" ||
    say "note: for zsh to complete rewind, add fpath=($zshcomp \$fpath) before compinit in ~/.zshrc" ;;
esac

# Hooks: which agents, and may we? "all" is every agent rewind-hook finds installed.
[ -x "$hook" ] || die "rewind-hook was not built" "the checkout must have hookd/cmd/rewind-hook"
found_none=0
if [ -z "$agents" ] || [ "$agents" = all ]; then
  agents=$("$hook" register --agents all --list-found) || die "could not look for agents"
  [ -n "$agents" ] || { agents=none found_none=1; }
fi
if [ -z "$tier" ] && [ -f "$HOME/.rewind/config.json" ]; then
  tier=$(sed -n 's/.*"tier"[[:space:]]*:[[:space:]]*"\([a-z]*\)".*/\1/p' "$HOME/.rewind/config.json" | head -n 1)
fi
tier=${tier:-balanced}
register=(--tier "$tier" --bin-dir "$bindir")
if [ "$agents" != none ] || [ "$statusline" = 1 ]; then
  if [ "$yes" != 1 ]; then
    what="register Rewind's hooks for ${agents/none/no agent}"
    [ "$statusline" = 1 ] && what="$what and set Claude Code's status line"
    if [ -t 0 ] && [ -t 1 ]; then
      printf 'install.sh: %s (tier %s)? [Y/n] ' "$what" "$tier"
      read -r answer || answer=n
      case "$answer" in ""|y|Y|yes|YES) yes=1 ;; esac
    fi
    if [ "$yes" != 1 ]; then
      say "did not $what: no terminal to ask (or declined)"
      say "to do it: ./install.sh --yes${agents:+ --agents $agents}, or later: rewind config --register-hooks"
      agents=none statusline=0
    fi
  fi
fi
[ "$statusline" = 1 ] && register+=(--statusline)
"$hook" register --agents "$agents" "${register[@]}" | report \
  || die "Rewind's hooks are not registered for the agent named above: its file could not be read (the other agents' were done)" \
    "fix the file named above by hand (it was left as it was), then run ./install.sh again"
say "tier $tier recorded in $HOME/.rewind/config.json"

case ":$PATH:" in
  *":$bindir:"*) ;;
  *)
    # Where a login shell of the user's reads it: macOS's Terminal starts login shells, so bash
    # there reads ~/.bash_profile, not ~/.bashrc; zsh (macOS's default) reads ~/.zshrc.
    case "${SHELL:-}" in
      */zsh) rc=$HOME/.zshrc ;;
      */bash) if [ "$(uname -s)" = Darwin ]; then rc=$HOME/.bash_profile; else rc=$HOME/.bashrc; fi ;;
      *) rc="your shell's startup file" ;;
    esac
    say "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\" in $rc" ;;
esac
if [ "$agents" = none ]; then
  if [ "$found_none" = 1 ]; then
    say "no agent found (looked for the config folders and commands of: $("$hook" register --agents none --list-known | sed 's/,/, /g')):"
  fi
  say "no hooks were registered, so nothing is checkpointed automatically yet."
  say "once an agent is installed: ./install.sh --yes, or rewind config --register-hooks; meanwhile rewind save takes checkpoints by hand."
else
  say "next: cd your-project && rewind init; then work with your agent as usual — checkpoints happen at every prompt."
  say "      rewind list shows them, rewind back 1 --both rewinds the last prompt's code and chat."
fi
