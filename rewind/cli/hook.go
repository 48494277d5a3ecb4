package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

type hookCmd struct{ common }

func (c *hookCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// Exec applies one hookd.Request from stdin and prints a hookd.Response.
func (c *hookCmd) Exec(ctx context.Context, e *env, args []string) error {
	var req hookd.Request
	dec := json.NewDecoder(io.LimitReader(e.stdin, 1<<20))
	if err := dec.Decode(&req); err != nil {
		return cmdline.Usagef("hook request on stdin: %v", err)
	}
	if req.Version > hookd.RequestVersion {
		return fmt.Errorf("hook request version %d is newer than this rewind (%d); reinstall Rewind", req.Version, hookd.RequestVersion)
	}
	if req.ProjectDir == "" {
		return cmdline.Usagef("hook request has no project_dir")
	}
	s, err := store.Open(req.ProjectDir)
	var untrusted *store.UntrustedStoreError
	if errors.As(err, &untrusted) {
		// Told to the person once, in the agent: otherwise only hook.log would know
		// that nothing is checkpointed.
		msg := fmt.Sprintf("Rewind checkpoints nothing in %s: %s. To fix: %s.", req.ProjectDir, untrusted.Reason, untrusted.Fix)
		return e.json(hookd.Response{Type: "hook", Action: hookd.ActionSkip, Reason: hookd.SkipUntrusted, Message: msg, Warnings: []string{err.Error()}})
	}
	created := ""
	if errors.Is(err, store.ErrNoStore) {
		top, ok := autoInitRoot(req)
		if !ok {
			return e.json(hookd.Response{Type: "hook", Action: hookd.ActionSkip, Reason: hookd.SkipNoStore,
				Message: fmt.Sprintf("Rewind is installed, but %s has no checkpoint store, so nothing is checkpointed; run 'rewind init' there to start.", req.ProjectDir)})
		}
		if s, _, err = store.Init(top, store.DefaultMode()); err != nil {
			return fmt.Errorf("create the store of %s: %w", top, err)
		}
		created = s.Dir
	}
	if err != nil {
		return err
	}
	resp, err := s.Hook(ctx, req)
	var tracked *snap.TrackedStoreError
	if errors.As(err, &tracked) {
		msg := fmt.Sprintf("Rewind checkpoints nothing in %s: %s. To fix: take it out of the repository (git rm -r --cached %s, and commit), and check what it holds.", req.ProjectDir, tracked.Error(), tracked.Path)
		return e.json(hookd.Response{Type: "hook", Action: hookd.ActionSkip, Reason: hookd.SkipUntrusted, Message: msg, Warnings: []string{err.Error()}})
	}
	if err != nil {
		return err
	}
	resp.Created = created
	return e.json(resp)
}

// autoInitRoot is where a hook may create a store by itself (auto_init): the top of the git
// work tree the project lies in, when that is neither the home folder nor /. Anywhere else a
// store is the person's decision ('rewind init').
func autoInitRoot(req hookd.Request) (string, bool) {
	if !req.AutoInit {
		return "", false
	}
	out, err := exec.Command("git", "-C", req.ProjectDir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", false
	}
	top := strings.TrimSpace(string(out))
	home, _ := os.UserHomeDir()
	if top == "" || top == "/" || home != "" && sameDir(top, home) {
		return "", false
	}
	return top, true
}

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func (c *hookCmd) doc() doc {
	return doc{
		summary: "apply one rewind-hook request (JSON on stdin)",
		text: `rewind-hook decides what an agent's hook event calls for and hands the store
work to this command: it reads one request object on stdin, updates the
session and takes a checkpoint under the store lock, and prints one response
object. A project without a store gets one when the request allows it
(auto_init) and the project is in a git work tree that is neither the home
folder nor /. See rewind-hook(1) for both objects.`,
		examples: []string{`echo '{"version":1,"event":"UserPromptSubmit","agent":"claude","project_dir":"'"$PWD"'","checkpoint":"always"}' | rewind hook`},
	}
}
