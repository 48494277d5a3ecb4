# shellcheck shell=bash
# scripts/bench section: rewind-hook as Claude Code runs it — whole processes, the payloads
# Claude Code sends on stdin, the command lines the registration writes (`<action> --agent
# claude`), rewind-hook handing the store work to the rewind binary beside it (both in
# $BENCH_BIN). Figures (the hook's cost targets):
#   - a no-op decision: a PreToolUse Edit right after a prompt's checkpoint, inside the tier's
#     anti-spam interval (balanced: 30 s), which rewind-hook answers "skip, interval" from the
#     store's hook-state.json without starting rewind: < 10 ms;
#   - a UserPromptSubmit checkpoint of an unchanged GOROOT/src copy (a git repository with a
#     store and one checkpoint already, past the racy window), with a 1 MiB transcript:
#     ≤ 1.5× `git status --porcelain` of the same tree.
# Sourced by scripts/bench: uses median, median_pair, row, goroot_copy, goroot_repo, $BENCH_DIR, $REWIND_SRC.
#
# rewind-hook reads its payload on stdin, so its commands carry a redirection: median's
# `hyperfine -N` attempt fails on them (rewind-hook exits 1 on the stray "<" argument, touching
# nothing) and it measures through the shell, whose start-up hyperfine subtracts.

hk=$BENCH_DIR/hook; mkdir -p "$hk"
hk_home=$hk/home                    # HOME of the hook: ~/.rewind/{config.json,logs/hook.log}, ~/.claude
hk_proj=$hk/goroot
goroot_repo "$hk_proj"
mkdir -p "$hk_home/.rewind" "$hk_home/.claude"
printf '{\n  "version": 1,\n  "tier": "balanced"\n}\n' > "$hk_home/.rewind/config.json"

# The session's transcript where Claude Code keeps it (it exists from the second prompt on).
hk_sid=7c9a6a3e-1b7e-4b8e-9a51-0d6c1f5e2a10
hk_tdir=$hk_home/.claude/projects/$(printf '%s' "$hk_proj" | sed 's/[^A-Za-z0-9]/-/g')
hk_transcript=$hk_tdir/$hk_sid.jsonl
mkdir -p "$hk_tdir" "$BENCH_DIR/jsonl"
[ -s "$BENCH_DIR/jsonl/t-1MiB.jsonl" ] || (cd "$REWIND_SRC/jsonl" && GOWORK=off go run ./internal/gentranscript -size 1MiB -o "$BENCH_DIR/jsonl/t-1MiB.jsonl")
[ -s "$hk_transcript" ] || cp "$BENCH_DIR/jsonl/t-1MiB.jsonl" "$hk_transcript"

# Payloads as Claude Code 2.1.197 sends them.
hk_common='"session_id":"'$hk_sid'","transcript_path":"'$hk_transcript'","cwd":"'$hk_proj'","permission_mode":"default"'
printf '{%s,"hook_event_name":"UserPromptSubmit","prompt":"Make fmt.Sprintf faster without changing its output."}\n' \
  "$hk_common" > "$hk/prompt.json"
printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/fmt/print.go","old_string":"func Sprintf(","new_string":"func Sprintf("},"tool_use_id":"toolu_01"}\n' \
  "$hk_common" "$hk_proj" > "$hk/pre-edit.json"

# The hook's environment, inside each $(...) only: the section is sourced and must not change
# HOME for the ones after it.
hk_env() {
  unset REWIND_HOME CLAUDE_ENV_FILE FACTORY_PROJECT_DIR DROID_PROJECT_DIR
  export HOME=$hk_home CLAUDE_PROJECT_DIR=$hk_proj CLAUDECODE=1
}
hk_prompt="rewind-hook user-prompt-submit --agent claude < $hk/prompt.json"
hk_pre="rewind-hook pre-tool-use --agent claude < $hk/pre-edit.json"
hk_log=$hk_home/.rewind/logs/hook.log

(
  hk_env
  [ -d "$hk_proj/.agent/rewind" ] || rewind -C "$hk_proj" init >/dev/null
  eval "$hk_prompt" # the checkpoint before: a full snapshot of the tree and the transcript
) || echo "bench: warning: the first rewind-hook checkpoint failed (see $hk_log)" >&2
sleep 2 # past the racy window, as between two real prompts

mkdir -p "$(dirname "$hk_log")"; : > "$hk_log"
(cd "$hk_proj" && git status --porcelain >/dev/null)
read -r prompt gst < <(hk_env; median_pair "$hk_prompt" "git -C $hk_proj status --porcelain")
# Right after a prompt's checkpoint, well inside the 30 s interval: nothing to do.
noop=$(hk_env; median "$hk_pre")
proc=$(median "true")

# Check that the runs were what the figures claim, from the hook's own log.
hk_prompts=$((BENCH_RUNS + PAIR_WARMUP)) # with median_pair's warm-up rounds
hk_runs=$((BENCH_RUNS + 2))    # with median's two warm-ups
hk_n=$(grep -c '"event":"UserPromptSubmit".*"action":"checkpoint"' "$hk_log" || true)
[ "$hk_n" = "$hk_prompts" ] || echo "bench: warning: $hk_n of $hk_prompts UserPromptSubmit runs took a checkpoint (see $hk_log)" >&2
hk_n=$(grep -c '"event":"PreToolUse".*"reason":"interval"' "$hk_log" || true)
[ "$hk_n" = "$hk_runs" ] || echo "bench: warning: $hk_n of $hk_runs PreToolUse runs were anti-spam skips (see $hk_log)" >&2
hk_reused=$( (hk_env; rewind -C "$hk_proj" list --json -n 1) | grep -c '"reused_from"' || true)
[ "$hk_reused" = 1 ] || echo "bench: warning: the newest prompt checkpoint did not reuse the previous snapshot" >&2

row "whole process, no-op (PreToolUse inside the interval)" "$noop" "budget" "0.010" "< 10 ms"
row "whole process, no-op (PreToolUse inside the interval)" "$noop" "true (process start)" "$proc" "report"
row "UserPromptSubmit checkpoint, tree unchanged" "$prompt" "git status --porcelain" "$gst" "≤ 1.5×"
