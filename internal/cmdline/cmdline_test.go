package cmdline

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
)

var errTyped = errors.New("a typed library error")

func testTool() *Tool {
	return &Tool{
		Name: "tool",
		Hint: func(err error) string {
			if errors.Is(err, errTyped) {
				return "pass --other"
			}
			return HintOf(err)
		},
		Code: func(err error) int {
			if errors.Is(err, errTyped) {
				return 10
			}
			return 0
		},
	}
}

func TestReport(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		asJSON bool
		code   int
		stderr string
	}{
		{"nil", bg, nil, false, 0, ""},
		{"failure", bg, errors.New("it broke"), false, 1, "tool: error: it broke\n"},
		{"carried hint", bg, WithHint(errors.New("it broke"), "do this"), false, 1, "tool: error: it broke\ntool: hint: do this\n"},
		{"usage", bg, WithHint(Usagef("bad %s", "flag"), "run 'tool help'"), false, 2, "tool: error: bad flag\ntool: hint: run 'tool help'\n"},
		{"typed, the tool's hint and code", bg, fmt.Errorf("wrapped: %w", errTyped), false, 10, "tool: error: wrapped: a typed library error\ntool: hint: pass --other\n"},
		{"flag error", bg, &FlagError{Command: "tool sub", Err: errors.New("flag provided but not defined: -x")}, false, 2,
			"tool: error: flag provided but not defined: -x\ntool: hint: run 'tool sub --help'\n"},
		{"quiet exit", bg, Exit(3), false, 3, ""},
		{"interrupted", cancelled, errors.New("read: context canceled"), false, 130, "tool: error: interrupted\n"},
		{"canceled", bg, fmt.Errorf("x: %w", context.Canceled), false, 130, "tool: error: interrupted\n"},
		{"quiet exit, interrupted", cancelled, Exit(3), false, 130, "tool: error: interrupted\n"},
		{"json", bg, WithHint(Usagef("bad"), "h"), true, 2, `{"type":"error","message":"bad","hint":"h","exit_code":2}` + "\n"},
		{"json without hint", bg, errors.New("a <b>"), true, 1, `{"type":"error","message":"a <b>","exit_code":1}` + "\n"},
		// A name from data is escaped for a person, whole lines kept one; JSON keeps it exact.
		{"control characters", bg, fmt.Errorf("open evil\x1b]0;pwned\x07\n\u202e.txt: %w", errTyped), false, 10,
			"tool: error: open evil\\033]0;pwned\\a\\n\\342\\200\\256.txt: a typed library error\ntool: hint: pass --other\n"},
		{"control characters in a carried hint", bg, WithHint(errors.New("x"), "rm \x1b[2J"), false, 1, "tool: error: x\ntool: hint: rm \\033[2J\n"},
		{"control characters, json", bg, errors.New("evil\x1b.txt"), true, 1, `{"type":"error","message":"evil\u001b.txt","exit_code":1}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			code := testTool().Report(tc.ctx, &buf, tc.err, tc.asJSON)
			if code != tc.code || buf.String() != tc.stderr {
				t.Errorf("Report = %d %q, want %d %q", code, buf.String(), tc.code, tc.stderr)
			}
		})
	}
}

func TestHintOfFirstInChain(t *testing.T) {
	err := WithHint(fmt.Errorf("outer: %w", WithHint(errors.New("inner"), "inner hint")), "outer hint")
	if h := HintOf(err); h != "outer hint" {
		t.Errorf("HintOf = %q", h)
	}
	if h := HintOf(fmt.Errorf("w: %w", &Error{Err: errors.New("x"), Code: 2})); h != "" {
		t.Errorf("HintOf without hint = %q", h)
	}
	if c := CodeOf(WithHint(Usagef("x"), "h")); c != ExitUsage {
		t.Errorf("CodeOf = %d", c)
	}
}

func TestVersionOf(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Settings: set("vcs.revision", "0123456789abcdef0123")}, "0123456789ab"},
		{debug.BuildInfo{Settings: set("vcs.revision", "0123456789abcdef", "vcs.modified", "true")}, "0123456789ab-dirty"},
		{debug.BuildInfo{Settings: set("vcs.revision", "abc")}, "abc"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{debug.BuildInfo{}, "dev"},
	} {
		if got := versionOf(&tc.bi); got != tc.want {
			t.Errorf("versionOf(%v) = %q, want %q", tc.bi.Settings, got, tc.want)
		}
	}
	Version = "v9"
	defer func() { Version = "" }()
	if got := VersionString(); got != "v9" {
		t.Errorf("VersionString with Version set = %q", got)
	}
}

// tree is a small ffcli tool: "sub" takes flags only, "pos" takes arguments with flags
// anywhere.
func tree(tl *Tool, ran *[]string) *ffcli.Command {
	var n int
	return &ffcli.Command{
		ShortUsage: "tool <sub|pos> [flags]",
		Subcommands: []*ffcli.Command{
			tl.Command(Command{Name: "sub", Args: "[-n N]", Help: "a subcommand",
				Flags: func(fs *flag.FlagSet) { fs.IntVar(&n, "n", 0, "a number") },
				Exec:  func(ctx context.Context, args []string) error { *ran = append(*ran, fmt.Sprint("sub ", n)); return nil }}),
			tl.Command(Command{Name: "pos", Args: "FILE", Positional: true,
				Flags: func(fs *flag.FlagSet) { fs.IntVar(&n, "n", 0, "a number") },
				Exec: func(ctx context.Context, args []string) error {
					*ran = append(*ran, fmt.Sprint("pos ", n, " ", strings.Join(args, ",")))
					return nil
				}}),
		},
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		args   string
		code   int
		stdout string
		stderr string // a regexp-free substring; "" means empty
		usages int    // how many times the usage is printed
		ran    string
	}{
		{args: "", code: 2, usages: 1},
		{args: "--help", code: 0, usages: 1},
		{args: "sub -h", code: 0, usages: 1},
		{args: "pos FILE --help", code: 0, usages: 1},
		{args: "--version", code: 0, stdout: "tool dev\n"},
		{args: "--version extra", code: 0, stdout: "tool dev\n"},
		{args: "frob", code: 2, stderr: "tool: error: unknown command \"frob\"\ntool: hint: run 'tool --help'\n"},
		{args: "--bogus", code: 2, stderr: "tool: error: flag provided but not defined: -bogus\ntool: hint: run 'tool --help'\n"},
		{args: "sub --bogus", code: 2, stderr: "tool: error: flag provided but not defined: -bogus\ntool: hint: run 'tool sub --help'\n"},
		{args: "pos FILE --bogus", code: 2, stderr: "tool: error: flag provided but not defined: -bogus\ntool: hint: run 'tool pos --help'\n"},
		{args: "sub extra", code: 2, stderr: "tool: error: sub takes no arguments, got \"extra\"\ntool: hint: run 'tool sub --help'\n"},
		{args: "sub -n 3", code: 0, ran: "sub 3"},
		{args: "pos a -n 4 b -- -c", code: 0, ran: "pos 4 a,b,-c"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			var ran []string
			tl := &Tool{Name: "tool"}
			var stdout, stderr bytes.Buffer
			code := tl.Run(context.Background(), tree(tl, &ran), strings.Fields(tc.args), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if stdout.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.stdout)
			}
			if n := strings.Count(stderr.String(), "USAGE"); n != tc.usages {
				t.Errorf("usage printed %d times, want %d: %q", n, tc.usages, stderr.String())
			}
			if tc.usages == 0 && stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
			if got := strings.Join(ran, ";"); got != tc.ran {
				t.Errorf("ran %q, want %q", got, tc.ran)
			}
		})
	}
}

func TestInterspersed(t *testing.T) {
	tests := []struct {
		args []string
		last int
		pos  []string
	}{
		{[]string{"f.jsonl", "--last", "3"}, 3, []string{"f.jsonl"}},
		{[]string{"--last", "2", "f.jsonl"}, 2, []string{"f.jsonl"}},
		{[]string{"a", "--last=4", "b"}, 4, []string{"a", "b"}},
		{[]string{"--", "--last"}, 0, []string{"--last"}},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("turns", flag.ContinueOnError)
		last := fs.Int("last", 0, "")
		pos, err := interspersed(fs, tt.args)
		if err != nil || *last != tt.last || strings.Join(pos, " ") != strings.Join(tt.pos, " ") {
			t.Errorf("interspersed(%q) = %q, last %d, %v", tt.args, pos, *last, err)
		}
	}
}

// TestHeapLimit: the soft limit holds while the live heap fits under it;
// past it the limit follows the live heap with a quarter of headroom, so
// the collector does not run without pause for nothing.
func TestHeapLimit(t *testing.T) {
	const soft = 64 << 20
	for _, c := range []struct{ live, want int64 }{
		{0, soft},
		{soft / 2, soft},
		{soft * 4 / 5, soft},
		{soft - 4, soft - 4 + (soft-4)/4}, // near the limit: a quarter above it all the same
		{soft, soft + soft/4},
		{200 << 20, 250 << 20},
	} {
		if got := heapLimit(soft, c.live); got != c.want {
			t.Errorf("heapLimit(%d MiB live) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestBoundHeapFollowsTheLiveHeap: a live heap past the soft limit raises
// the limit after a collection.
func TestBoundHeapFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const soft = 8 << 20
	defer BoundHeap(soft)()
	live := make([][]byte, 32)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 32 MiB held
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) <= soft && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 32<<20 {
		t.Errorf("limit %d MiB with 32 MiB live, want it above the live heap", got>>20)
	}
	runtime.KeepAlive(live)
}

// A Choice takes any value (the command checks it, in its own words) and names its set.
func TestChoice(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var tier, agents string
	ChoiceVar(fs, &tier, "tier", "balanced", []string{"minimal", "balanced"}, "the `TIER`")
	ChoiceListVar(fs, &agents, "agents", "", []string{"claude", "codex", "all"}, "the `AGENTS`")
	fs.Bool("yes", false, "")
	if err := fs.Parse([]string{"--tier", "nope", "--agents=claude,codex"}); err != nil {
		t.Fatal(err)
	}
	if tier != "nope" || agents != "claude,codex" {
		t.Errorf("tier %q, agents %q; want nope, claude,codex", tier, agents)
	}
	if d := fs.Lookup("tier").DefValue; d != "balanced" {
		t.Errorf("tier's default %q, want balanced", d)
	}
	if v, list := ChoicesOf(fs.Lookup("tier")); strings.Join(v, " ") != "minimal balanced" || list {
		t.Errorf("ChoicesOf(tier) = %q, %v", v, list)
	}
	if v, list := ChoicesOf(fs.Lookup("agents")); len(v) != 3 || !list {
		t.Errorf("ChoicesOf(agents) = %q, %v", v, list)
	}
	if v, _ := ChoicesOf(fs.Lookup("yes")); v != nil {
		t.Errorf("ChoicesOf(yes) = %q, want nil", v)
	}
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults() // (makes a zero Choice: it must not panic)
	if !strings.Contains(b.String(), "-tier TIER") {
		t.Errorf("PrintDefaults: %s", b.String())
	}
}
