// Command genstore builds a project and a checkpoint store of many
// checkpoints through the store API, for scripts/bench's store section: one
// process rather than one per checkpoint, so that 10,000 checkpoints take
// minutes, not an hour. Each checkpoint is a real Save (walk, layer, manifest
// delta, transcript capture, metadata) after a realistic edit: most change
// one or two files, some none, some add, delete or rename a file, and the
// transcript grows by a turn at each. What is measured afterwards (gc, list,
// validate, statusline) runs as whole processes on the store it leaves.
//
// It prints one JSON object: the checkpoints made, the bytes the edits
// wrote (files written whole, as a layer stores them) and appended to the
// transcript, and how long it took.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "the project `folder` to create (must not exist)")
	n := flag.Int("n", 10000, "checkpoints to take")
	files := flag.Int("files", 200, "files in the project")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if _, err := os.Stat(*dir); err == nil {
		return fmt.Errorf("%s exists", *dir)
	}
	r := rand.New(rand.NewPCG(*seed, 0))
	g := &gen{root: *dir, r: r}
	for i := 0; i < *files; i++ {
		g.add()
	}
	if os.Getenv("REWIND_HOME") == "" {
		// Never the user's own home: the store is recorded there as theirs. A caller that
		// opens the store afterwards names the home it opens it with.
		os.Setenv("REWIND_HOME", filepath.Clean(*dir)+".rewind-home")
	}
	s, _, err := store.Init(*dir, layout.ModeProject)
	if err != nil {
		return err
	}
	// The agent's transcript lives outside the project, as Claude Code's
	// does (~/.claude/projects/…): beside the project folder.
	transcript := filepath.Clean(*dir) + ".session.jsonl"
	os.Remove(transcript)
	g.changed = 0
	start := time.Now()
	ctx := context.Background()
	for i := 0; i < *n; i++ {
		trig := g.edit(i)
		g.turn(transcript, i)
		_, err := s.Save(ctx, store.SaveOptions{Trigger: trig, TranscriptPath: transcript, Agent: "claude", SessionID: "bench-session"})
		if err != nil {
			return fmt.Errorf("checkpoint %d: %w", i, err)
		}
		if (i+1)%1000 == 0 {
			fmt.Fprintf(os.Stderr, "genstore: %d checkpoints, %.0f s\n", i+1, time.Since(start).Seconds())
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"checkpoints":      *n,
		"files":            len(g.names),
		"changed_bytes":    g.changed,
		"transcript_bytes": g.transcript,
		"seconds":          time.Since(start).Seconds(),
	})
}

type gen struct {
	root       string
	r          *rand.Rand
	names      []string
	next       int
	changed    int64 // bytes of the files written whole
	transcript int64 // bytes appended to the transcript
}

var words = []string{"func", "return", "if", "err", "nil", "for", "range", "value", "count", "store", "the", "a", "checkpoint", "layer", "manifest", "// note", "{", "}", "x :=", "len(s)"}

// text is n lines of code-like text.
func (g *gen) text(lines int) []byte {
	var b []byte
	for i := 0; i < lines; i++ {
		for w := 0; w < 3+g.r.IntN(8); w++ {
			b = append(b, words[g.r.IntN(len(words))]...)
			b = append(b, ' ')
		}
		b = append(b, '\n')
	}
	return b
}

func (g *gen) write(name string, b []byte) {
	p := filepath.Join(g.root, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		panic(err)
	}
	g.changed += int64(len(b))
}

func (g *gen) add() string {
	name := fmt.Sprintf("pkg%d/sub%d/file%d.go", g.next%7, g.next%3, g.next)
	g.next++
	g.names = append(g.names, name)
	g.write(name, g.text(20+g.r.IntN(300)))
	return name
}

// edit changes the project as an agent's step might, and returns the
// trigger a hook would record for it.
func (g *gen) edit(i int) store.Trigger {
	pick := func() (int, string) { k := g.r.IntN(len(g.names)); return k, g.names[k] }
	hook := store.Trigger{Kind: store.TriggerHook, Agent: "claude", Event: "PostToolUse", Tool: "Edit"}
	switch p := g.r.IntN(100); {
	case p < 55: // one file edited
		_, name := pick()
		g.rewrite(name)
		hook.File = name
	case p < 70: // a few files edited
		for j := 0; j < 2+g.r.IntN(4); j++ {
			_, name := pick()
			g.rewrite(name)
		}
		hook.Tool = "Bash"
	case p < 85: // nothing changed (a prompt, a read-only tool)
		if i%3 == 0 {
			return store.Trigger{Kind: store.TriggerHook, Agent: "claude", Event: "UserPromptSubmit", Prompt: fmt.Sprintf("step %d: carry on", i)}
		}
		hook.Tool = "Read"
	case p < 92: // a file added
		hook.File = g.add()
		hook.Tool = "Write"
	case p < 96 && len(g.names) > 20: // a file deleted
		k, name := pick()
		os.Remove(filepath.Join(g.root, name))
		g.names = append(g.names[:k], g.names[k+1:]...)
		hook.Tool = "Bash"
	default: // a file renamed
		k, name := pick()
		to := fmt.Sprintf("pkg%d/moved%d.go", g.next%7, g.next)
		g.next++
		os.Rename(filepath.Join(g.root, name), filepath.Join(g.root, to))
		g.names[k] = to
		hook.Tool = "Bash"
	}
	return hook
}

// rewrite changes a few lines of a file (the layer stores it whole).
func (g *gen) rewrite(name string) {
	p := filepath.Join(g.root, name)
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	at := g.r.IntN(len(b) + 1)
	out := append(append(append([]byte{}, b[:at]...), g.text(1+g.r.IntN(3))...), b[at:]...)
	g.write(name, out)
}

// turn appends a prompt, an assistant reply and a tool exchange to the
// transcript, as Claude Code writes them.
func (g *gen) turn(path string, i int) {
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var b []byte
	line := func(v any) {
		j, _ := json.Marshal(v)
		b = append(append(b, j...), '\n')
	}
	if i%5 == 0 {
		line(map[string]any{"type": "user", "sessionId": "bench-session", "message": map[string]any{"role": "user", "content": fmt.Sprintf("step %d: carry on with the change", i)}})
	}
	line(map[string]any{"type": "assistant", "sessionId": "bench-session", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": string(g.text(2 + g.r.IntN(6)))}}}})
	if _, err := f.Write(b); err != nil {
		panic(err)
	}
	g.transcript += int64(len(b))
}
