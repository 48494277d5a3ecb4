//go:build unix

package reliability

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// agentState is a file in each agent's own state folder, as a project in
// HOME holds them.
var agentState = []string{
	".factory/sessions/s.jsonl", ".codex/sessions/s.jsonl", ".gemini/settings.json",
	".copilot/session-state/1/events.jsonl", ".pi/agent/sessions/s.jsonl",
	".local/share/opencode/opencode.db", ".config/opencode/opencode.json",
}

// TestStateInsideTheTree puts Rewind's own state and the agents' state
// folders inside the project — the project is HOME — and runs saves and
// restores over a changing tree: a restore brings back exactly the tree,
// every checkpoint stays, the live transcript and every state file stay
// byte for byte, the store validates, and undo-restore brings the tree
// back.
func TestStateInsideTheTree(t *testing.T) {
	variants := []struct{ name, mode, rewindHome string }{
		{"global store in HOME", "global", ""},
		{"project store in HOME", "project", ""},
		{"REWIND_HOME inside the project", "project", "tools/rewind-home"},
		{"global store under REWIND_HOME inside the project", "global", "tools/rewind-home"},
	}
	runs, failures := 0, 0
	for vi, v := range variants {
		t.Run(strings.ReplaceAll(v.name, " ", "-"), func(t *testing.T) {
			home := filepath.Join(workDir(t), "home")
			env := []string{"HOME=" + home}
			skip := []string{".rewind", ".claude", ".factory", ".codex", ".gemini", ".copilot", ".pi", ".local/share/opencode", ".config/opencode"}
			if v.rewindHome != "" {
				env = append(env, "REWIND_HOME="+filepath.Join(home, v.rewindHome))
				skip = append(skip, v.rewindHome)
			}
			transcript := filepath.Join(home, ".claude/projects/-home/11111111-2222-4333-8444-555555555555.jsonl")
			genTranscript(t, transcript, 64<<10, 1)
			for _, f := range agentState {
				writeFile(t, filepath.Join(home, f), []byte("state of "+f+"\n"), 0o600)
			}
			genTree(t, filepath.Join(home, "src"), 60, uint64(vi))
			rw := func(args ...string) result {
				return run(t, proc{name: "rewind", args: append(args, "-C", home), env: env, dir: home})
			}
			if r := rw("init", "--force", "--mode", v.mode); r.code != 0 {
				t.Fatalf("rewind init --force: exit %d: %s", r.code, r.stderr)
			}
			digestOf := func() digest { return withoutState(treeDigest(t, home), skip) }
			stateOf := func() string {
				var b strings.Builder
				for _, f := range append(slices.Clone(agentState), strings.TrimPrefix(transcript, home+"/")) {
					data, err := os.ReadFile(filepath.Join(home, f))
					fmt.Fprintf(&b, "%s %x %v\n", f, data, err)
				}
				return b.String()
			}
			rng := rand.New(rand.NewPCG(uint64(vi), 5))
			saved := map[string]digest{}
			var order []string
			for round := range stateRounds {
				runs++
				var errs []string
				fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
				if r := rw("save", "--transcript", transcript, "--agent", "claude", fmt.Sprintf("round %d", round)); r.code != 0 {
					t.Fatalf("save: exit %d: %s", r.code, r.stderr)
				}
				id := checkpoints(t, home, env)[0]
				saved[id] = digestOf()
				order = append(order, id)
				mutateTree(t, filepath.Join(home, "src"), uint64(round*7+vi))
				appendTranscript(t, transcript, uint64(round))
				target := order[rng.IntN(len(order))]
				before, now, states := checkpoints(t, home, env), digestOf(), stateOf()
				args := []string{"restore", target, "--yes"}
				if rng.IntN(2) == 0 {
					args = append(args, "--code-only")
				}
				if r := rw(args...); r.code != 0 {
					fail("%s: exit %d: %s", strings.Join(args, " "), r.code, strings.TrimSpace(r.stderr))
				}
				if got := digestOf(); got.sum() != saved[target].sum() {
					fail("restore %s did not bring its tree back: %s", target, saved[target].diff(got))
				}
				after := checkpoints(t, home, env)
				for _, id := range before {
					if !slices.Contains(after, id) {
						fail("checkpoint %s is gone after the restore", id)
					}
				}
				if len(after) != len(before)+1 {
					fail("%d checkpoints after the restore, want %d (the backup added)", len(after), len(before)+1)
				}
				if got := stateOf(); got != states {
					fail("the restore changed a state file or the live transcript")
				}
				if probs, _ := validate(t, home, env); len(probs) > 0 {
					fail("validate: %v", probs)
				}
				if r := rw("undo-restore"); r.code != 0 {
					fail("undo-restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
				} else if got := digestOf(); got.sum() != now.sum() {
					fail("undo-restore did not bring the tree back: %s", now.diff(got))
				}
				if got := stateOf(); got != states {
					fail("undo-restore changed a state file or the live transcript")
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
					return
				}
			}
		})
	}
	figures(t, "state-inside-the-tree", runs, runs*(len(agentState)+2), failures)
}

// withoutState drops the entries under the folders in skip.
func withoutState(d digest, skip []string) digest {
	out := digest{}
	for p, v := range d {
		keep := true
		for _, s := range skip {
			if p == s || strings.HasPrefix(p, s+"/") {
				keep = false
			}
		}
		if keep {
			out[p] = v
		}
	}
	return out
}

// appendTranscript appends whole turns to a transcript, as the agent does.
func appendTranscript(t testing.TB, path string, seed uint64) {
	t.Helper()
	var b bytes.Buffer
	appendTurns(&b, 8<<10, seed+100, "s1")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}
