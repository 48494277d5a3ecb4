// Rewind's bridge for pi: checkpoints at session start, at every prompt and before file edits.
// rewind-bridge: do not edit. `rewind-hook register --agents pi` (install.sh) writes this file
// and `rewind-hook unregister` removes it; edits are lost at the next install.
//
// pi has no shell hooks, so this extension turns pi's events into the hook payloads
// rewind-hook reads on stdin (Claude Code's field names) and runs rewind-hook with them. pi
// blocks a tool when a tool_call handler throws: every failure here is caught, logged to
// Rewind's hook.log, and the wait is bounded, so the agent is never stopped or slowed by much.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

const HOOK = "__REWIND_HOOK__";
const AGENT = "pi";
// rewind-hook gives up on its own after its deadline (10 s by default); this is the bridge's
// own bound, in case rewind-hook itself hangs.
const TIMEOUT_MS = 15000;

function log(event: string, error: string) {
  try {
    const dir = join(process.env.REWIND_HOME || join(homedir(), ".rewind"), "logs");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const line = { time: new Date().toISOString(), event, agent: AGENT, ms: 0, error: "bridge: " + error };
    appendFileSync(join(dir, "hook.log"), JSON.stringify(line) + "\n", { mode: 0o600 });
  } catch {
    // Nowhere left to report to; the agent must go on.
  }
}

// run hands one event to rewind-hook and resolves, with what rewind-hook printed for the person
// (a systemMessage, "" when none), when it is done, failed or timed out; it never rejects.
// rewind-hook logs its own runs; the bridge logs only what rewind-hook could not (not found,
// not started, killed at the timeout).
function run(action: string, event: string, payload: Record<string, unknown>): Promise<string> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let out = "";
    const done = (error?: string) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (error) log(event, error);
      let message = "";
      try {
        message = out.trim() === "" ? "" : String(JSON.parse(out).systemMessage || "");
      } catch {}
      resolve(message);
    };
    try {
      const child = spawn(HOOK, [action, "--agent", AGENT], { stdio: ["pipe", "pipe", "ignore"], env: process.env });
      child.stdout.on("data", (b: Buffer) => {
        if (out.length < 65536) out += b.toString();
      });
      timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {}
        done(`rewind-hook did not finish within ${TIMEOUT_MS} ms; killed`);
      }, TIMEOUT_MS);
      child.on("error", (err) => done(`cannot run ${HOOK}: ${err.message}`));
      child.on("close", () => done());
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
    } catch (err) {
      done(`cannot run ${HOOK}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
}

// session describes the current session to rewind-hook; a failure here must not throw.
function session(ctx: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  try {
    out.cwd = ctx?.cwd ?? process.cwd();
    const sm = ctx?.sessionManager;
    const file = sm?.getSessionFile?.();
    if (file) out.transcript_path = file;
    const id = sm?.getSessionId?.();
    if (id) out.session_id = id;
  } catch {}
  return out;
}

// exportSession puts the session's identity into pi's own environment, which every command of
// pi's bash tool inherits (pi has no env file): so `rewind back 1` run by the agent finds its
// session, and rewind is on PATH.
function exportSession(ctx: any) {
  try {
    const s = session(ctx);
    process.env.REWIND_AGENT = AGENT;
    if (typeof s.session_id === "string") process.env.REWIND_SESSION_ID = s.session_id;
    if (typeof s.transcript_path === "string") process.env.REWIND_TRANSCRIPT_PATH = s.transcript_path;
    if (typeof s.cwd === "string") process.env.REWIND_PROJECT_DIR = s.cwd;
    const bin = dirname(HOOK);
    const path = (process.env.PATH || "").split(":").filter((d) => d && d !== bin);
    process.env.PATH = [bin, ...path].join(":");
  } catch {}
}

export default function (pi: any) {
  const on = (name: string, action: string, event: string, extra?: (e: any) => Record<string, unknown>) => {
    pi.on(name, async (e: any, ctx: any) => {
      try {
        const message = await run(action, event, { ...session(ctx), ...(extra ? extra(e) : {}) });
        if (message) ctx?.ui?.notify?.(message, "warning");
      } catch {}
      return undefined;
    });
  };
  pi.on("session_start", async (_e: any, ctx: any) => {
    exportSession(ctx);
  });
  on("session_start", "session-start", "SessionStart", (e) => ({ source: e?.reason ?? "" }));
  on("input", "user-prompt-submit", "UserPromptSubmit", (e) => ({ prompt: typeof e?.text === "string" ? e.text : "" }));
  on("tool_call", "pre-tool-use", "PreToolUse", (e) => ({ tool_name: e?.toolName ?? "", tool_input: e?.input ?? {} }));
  on("tool_result", "post-tool-use", "PostToolUse", (e) => ({ tool_name: e?.toolName ?? "", tool_input: e?.input ?? {} }));
  on("agent_end", "stop", "Stop");
  on("session_before_compact", "pre-compact", "PreCompact");
  on("session_shutdown", "session-end", "SessionEnd");
}
