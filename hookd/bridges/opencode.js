// Rewind's bridge for OpenCode: checkpoints at every prompt and before file edits.
// rewind-bridge: do not edit. `rewind-hook register --agents opencode` (install.sh) writes this
// file and `rewind-hook unregister` removes it; edits are lost at the next install.
//
// OpenCode has no shell hooks and keeps its sessions in SQLite, not in a transcript file. This
// plugin turns OpenCode's hooks and events into the hook payloads rewind-hook reads on stdin
// (Claude Code's field names) and runs rewind-hook with them. As the transcript it hands over a
// mirror of the session that it keeps in Rewind's folder: one line per message, each exactly
// what `opencode export` lists ({"info": …, "parts": […]}), with the session's own record
// beside it. OpenCode blocks a tool when a tool.execute.before hook throws, and rejects the
// prompt when chat.message throws, and it waits for a hook without limit: every failure here is
// caught and logged to Rewind's hook.log, and every wait is bounded.
import { spawn } from "node:child_process"
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"

const HOOK = "__REWIND_HOOK__"
const AGENT = "opencode"
// rewind-hook gives up on its own after its deadline (10 s by default); this is the bridge's
// own bound, in case it hangs. Reading the session through OpenCode's client gets less.
const TIMEOUT_MS = 15000
const MIRROR_TIMEOUT_MS = 5000

const rewindHome = () => process.env.REWIND_HOME || join(homedir(), ".rewind")

function log(event, error) {
  try {
    const dir = join(rewindHome(), "logs")
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const line = { time: new Date().toISOString(), event, agent: AGENT, ms: 0, error: "bridge: " + error }
    appendFileSync(join(dir, "hook.log"), JSON.stringify(line) + "\n", { mode: 0o600 })
  } catch {
    // Nowhere left to report to; the agent must go on.
  }
}

// within resolves to what p resolves to, or to fallback after ms; it never rejects.
function within(p, ms, fallback) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms)
    Promise.resolve(p).then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      () => {
        clearTimeout(timer)
        resolve(fallback)
      },
    )
  })
}

// run hands one event to rewind-hook and resolves, with what rewind-hook printed for the person
// (a systemMessage, "" when none), when it is done, failed or timed out; it never rejects.
// rewind-hook logs its own runs; the bridge logs what rewind-hook could not.
function run(action, event, payload) {
  return new Promise((resolve) => {
    let settled = false
    let timer
    let out = ""
    const done = (error) => {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      if (error) log(event, error)
      let message = ""
      try {
        message = out.trim() === "" ? "" : String(JSON.parse(out).systemMessage || "")
      } catch {}
      resolve(message)
    }
    try {
      const child = spawn(HOOK, [action, "--agent", AGENT], { stdio: ["pipe", "pipe", "ignore"], env: process.env })
      child.stdout.on("data", (b) => {
        if (out.length < 65536) out += b.toString()
      })
      timer = setTimeout(() => {
        try {
          child.kill("SIGKILL")
        } catch {}
        done(`rewind-hook did not finish within ${TIMEOUT_MS} ms; killed`)
      }, TIMEOUT_MS)
      child.on("error", (err) => done(`cannot run ${HOOK}: ${err.message}`))
      child.on("close", () => done())
      child.stdin.on("error", () => {})
      child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }))
    } catch (err) {
      done(`cannot run ${HOOK}: ${err && err.message ? err.message : String(err)}`)
    }
  })
}

const mirrorPath = (id) => join(rewindHome(), "opencode", id + ".jsonl")

function writeAtomic(path, text) {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const tmp = path + ".tmp-" + process.pid
  writeFileSync(tmp, text, { mode: 0o600 })
  renameSync(tmp, path)
}

export const RewindBridge = async ({ client, directory }) => {
  const roots = new Map() // session id → the session whose conversation it belongs to
  // Which OpenCode wrote the mirrors: a fork is loaded with it (`opencode import`) even when
  // it is not on PATH.
  try {
    writeAtomic(join(rewindHome(), "opencode", "agent.json"), JSON.stringify({ version: 1, executable: process.execPath }) + "\n")
  } catch {}

  // root follows a sub-agent's session (a task) up to the session the user talks to.
  async function root(id) {
    if (roots.has(id)) return roots.get(id)
    let cur = id
    for (let i = 0; i < 8; i++) {
      const res = await within(client.session.get({ path: { id: cur } }), MIRROR_TIMEOUT_MS, null)
      const parent = res && res.data && res.data.parentID
      if (!parent) break
      cur = parent
    }
    roots.set(id, cur)
    return cur
  }

  // mirror writes the session as it is stored now, and returns the payload naming it.
  async function mirror(id) {
    const out = { session_id: id, transcript_path: mirrorPath(id), cwd: directory }
    const [msgs, info] = await Promise.all([
      within(client.session.messages({ path: { id } }), MIRROR_TIMEOUT_MS, null),
      within(client.session.get({ path: { id } }), MIRROR_TIMEOUT_MS, null),
    ])
    if (!msgs || !Array.isArray(msgs.data)) {
      log("mirror", `could not read session ${id} from OpenCode`)
      return out
    }
    writeAtomic(mirrorPath(id), msgs.data.map((m) => JSON.stringify(m) + "\n").join(""))
    if (info && info.data) writeAtomic(join(rewindHome(), "opencode", id + ".session.json"), JSON.stringify(info.data) + "\n")
    return out
  }

  // hook runs action for the session, never throwing; what rewind-hook has for the person is
  // shown as a toast (the TUI's; `opencode run` shows none).
  async function hook(sessionID, action, event, extra) {
    try {
      const id = await root(sessionID)
      const message = await run(action, event, { ...(await mirror(id)), ...extra })
      if (message) await within(client.tui.showToast({ body: { title: "Rewind", message, variant: "warning" } }), 2000, null)
    } catch (err) {
      log(event, String(err && err.message ? err.message : err))
    }
  }

  return {
    event: async ({ event }) => {
      try {
        const p = event && event.properties
        if (event.type === "session.created" && p && p.info && !p.info.parentID) {
          await hook(p.info.id, "session-start", "SessionStart", { source: "startup" })
        } else if (event.type === "session.idle" && p && p.sessionID) {
          await hook(p.sessionID, "stop", "Stop", {})
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const text = ((output && output.parts) || [])
          .filter((x) => x && x.type === "text" && !x.synthetic && !x.ignored)
          .map((x) => x.text)
          .join("\n")
        if (text === "") return // an internal prompt, not the user's
        await hook(input.sessionID, "user-prompt-submit", "UserPromptSubmit", { prompt: text })
      } catch {}
    },
    "tool.execute.before": async (input, output) => {
      try {
        await hook(input.sessionID, "pre-tool-use", "PreToolUse", { tool_name: input.tool, tool_input: (output && output.args) || {} })
      } catch {}
    },
    "tool.execute.after": async (input) => {
      try {
        await hook(input.sessionID, "post-tool-use", "PostToolUse", { tool_name: input.tool, tool_input: input.args || {} })
      } catch {}
    },
    "experimental.session.compacting": async (input) => {
      try {
        await hook(input.sessionID, "pre-compact", "PreCompact", {})
      } catch {}
    },
    // What the agent's shell commands see (OpenCode's env file): the session, so that
    // `rewind back 1` run by the agent finds it, and rewind on PATH.
    "shell.env": async (input, output) => {
      try {
        if (!output || !output.env || !input || !input.sessionID) return
        const id = await root(input.sessionID)
        const bin = dirname(HOOK)
        const path = (process.env.PATH || "").split(":").filter((d) => d && d !== bin)
        Object.assign(output.env, {
          REWIND_AGENT: AGENT,
          REWIND_SESSION_ID: id,
          REWIND_TRANSCRIPT_PATH: mirrorPath(id),
          REWIND_PROJECT_DIR: directory,
          PATH: [bin, ...path].join(":"),
        })
      } catch {}
    },
  }
}
