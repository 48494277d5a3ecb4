package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
)

// sessionEndDeadline: Claude Code gives SessionEnd hooks about 1.5 s in all.
const sessionEndDeadline = time.Second

// hookCmd is one hook action ("" = dispatch on hook_event_name).
type hookCmd struct {
	action string
	agent  string
	dryRun bool
}

func (c *hookCmd) RegisterFlags(fs *flag.FlagSet) {
	cmdline.ChoiceVar(fs, &c.agent, "agent", "", hookd.AgentNames(), "the `AGENT` that runs the hook: "+strings.Join(hookd.AgentNames(), ", ")+" (default: detect)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the request for rewind on stdout instead of running it; touch nothing")
}

// logEntry is one line of ~/.rewind/logs/hook.log.
type logEntry struct {
	Time       string           `json:"time"`
	Event      string           `json:"event,omitempty"`
	Agent      string           `json:"agent,omitempty"`
	SessionID  string           `json:"session_id,omitempty"`
	ProjectDir string           `json:"project_dir,omitempty"`
	Tool       string           `json:"tool,omitempty"`
	Tier       string           `json:"tier,omitempty"`
	Decision   hookd.Policy     `json:"decision,omitempty"` // the request's checkpoint policy
	EnvFile    string           `json:"env_file,omitempty"` // written at SessionStart
	Action     hookd.Action     `json:"action,omitempty"`   // rewind's answer
	Checkpoint string           `json:"checkpoint,omitempty"`
	Reason     hookd.SkipReason `json:"reason,omitempty"`
	Removed    int              `json:"removed,omitempty"`
	Created    string           `json:"created,omitempty"`  // the store rewind made (auto_init)
	Notified   bool             `json:"notified,omitempty"` // the person was told the project has no store
	Warnings   []string         `json:"warnings,omitempty"` // what went wrong without failing the event
	Rewound    bool             `json:"rewound,omitempty"`  // the person was told a restore rewound the code under this session
	MS         int64            `json:"ms"`
	Error      string           `json:"error,omitempty"`
}

func (c *hookCmd) Exec(ctx context.Context, e *env, _ []string) error {
	start := time.Now()
	le := logEntry{Time: start.UTC().Format(time.RFC3339Nano)}
	home, herr := os.UserHomeDir()
	err := c.run(ctx, e, home, start, &le)
	le.MS = time.Since(start).Milliseconds()
	if err != nil {
		le.Error = err.Error()
	}
	if herr == nil && !c.dryRun {
		appendLog(home, le)
	}
	if err != nil {
		return hookFailure{err}
	}
	return nil
}

// run answers one hook event: who sent it, what the tier decides, and, unless the store
// answers by itself, what rewind does with it. Every step is written into le.
func (c *hookCmd) run(ctx context.Context, e *env, home string, start time.Time, le *logEntry) error {
	in, agent, event, err := c.identify(e, le)
	if err != nil {
		return err
	}
	if home == "" {
		return errors.New("no home directory ($HOME is not set)")
	}
	project, err := hookd.ProjectDir(in, agent, e.getenv)
	if err != nil {
		return err
	}
	le.ProjectDir = project

	d, err := decide(in, agent, event, home, project, start, e.getenv, le)
	if err != nil {
		return err
	}
	if c.dryRun {
		return e.out.Encode(d.req)
	}
	if event == "SessionStart" && d.req.EnvFile != "" {
		if err := hookd.AppendEnvFile(d.req.EnvFile, hookd.EnvExports(d.req, d.cfg.BinDir, e.getenv("PATH"))); err != nil {
			d.problems = append(d.problems, err)
		} else {
			le.EnvFile = d.req.EnvFile
		}
	}

	var resp hookd.Response
	if reason := hookd.Skip(hookd.StoreDir(project), d.req, time.Now()); reason != "" {
		// What rewind would answer, read from the store without starting it.
		resp = hookd.Response{Type: "hook", Action: hookd.ActionSkip, Reason: reason}
	} else {
		ctx, cancel := context.WithDeadline(ctx, d.deadline)
		defer cancel()
		if resp, err = callRewind(ctx, d.req); err != nil {
			return errors.Join(append([]error{err}, d.problems...)...)
		}
	}
	le.Action, le.Checkpoint, le.Reason, le.Removed = resp.Action, resp.Checkpoint, resp.Reason, resp.Removed
	le.Created = resp.Created
	// What went wrong without failing the event (a transcript Rewind would not read) is
	// logged, not shown: the checkpoint itself records it (rewind show).
	le.Warnings = resp.Warnings
	if err := notify(e, agent, event, home, project, resp, le); err != nil {
		return err
	}
	if len(d.problems) > 0 {
		return fmt.Errorf("%w (used tier %s)", errors.Join(d.problems...), d.tier.Name)
	}
	return nil
}

// identify reads the event from stdin and tells which agent sent it (--agent, else from the
// event and the environment) and which canonical event it is (--action, else the agent's name
// for it).
func (c *hookCmd) identify(e *env, le *logEntry) (*hookd.Input, *hookd.Agent, string, error) {
	in, err := hookd.ParseInput(e.stdin)
	if err != nil {
		return nil, nil, "", err
	}
	var agent *hookd.Agent
	if c.agent != "" {
		agent, err = hookd.LookupAgent(c.agent)
	} else {
		agent, err = hookd.DetectAgent(in, e.getenv)
	}
	if agent != nil {
		in.For(agent)
		le.Agent = agent.Name
	}
	event := in.HookEventName
	if c.action != "" {
		event, _ = hookd.EventForAction(c.action)
	} else if agent != nil && event != "" {
		if canon, ok := agent.CanonicalEvent(event); ok {
			event = canon
		}
	}
	le.Event, le.SessionID, le.Tool = event, in.SessionID, in.ToolName
	if err != nil {
		return nil, nil, "", err
	}
	if event == "" {
		return nil, nil, "", errors.New("the hook input has no hook_event_name and no action was given")
	}
	return in, agent, event, nil
}

// decision is what the project's config and tier make of an event.
type decision struct {
	cfg      layout.Config
	tier     *hookd.Tier
	req      hookd.Request
	deadline time.Time // when the hook must be done
	problems []error   // a broken config, reported once the checkpoint is taken
}

// decide reads the project's config and tier and makes the request rewind is asked. A broken
// config must not cost the checkpoint: the defaults are used, and the problem reported.
func decide(in *hookd.Input, agent *hookd.Agent, event, home, project string, start time.Time, getenv func(string) string, le *logEntry) (*decision, error) {
	d := new(decision)
	var err error
	if d.cfg, err = hookd.LoadConfig(home, project); err != nil {
		d.problems = append(d.problems, err)
	}
	if d.tier, err = hookd.LoadTier(d.cfg.Tier); err != nil {
		d.problems = append(d.problems, fmt.Errorf("config: %w", err))
		if d.tier, err = hookd.LoadTier(layout.DefaultTier); err != nil {
			return nil, err
		}
	}
	le.Tier = d.tier.Name
	if d.req, err = hookd.Decide(in, agent, d.tier, event, getenv); err != nil {
		return nil, err
	}
	le.Decision = d.req.Checkpoint
	d.req.AutoInit = d.cfg.AutoInitOn()

	budget := time.Duration(d.cfg.HookDeadlineMS) * time.Millisecond
	if event == "SessionEnd" {
		budget = min(budget, sessionEndDeadline)
	}
	d.deadline = start.Add(budget)
	// rewind gives up a little before the hook must be done, so that it
	// can leave the store clean and rewind-hook can still log.
	margin := min(budget/10, 500*time.Millisecond)
	d.req.DeadlineUnixMS = d.deadline.Add(-margin).UnixMilli()
	return d, nil
}

// notify shows rewind's messages on the agent's screen, where the agent shows a hook's
// message for this event: the project's first notice, once, and a rewound session's notice.
func notify(e *env, agent *hookd.Agent, event, home, project string, resp hookd.Response, le *logEntry) error {
	var say []string
	if resp.Message != "" && agent.Shows(event) && firstNotice(home, project) {
		// Once per project, on the agent's screen: a project without a store
		// checkpoints nothing, and only hook.log would know.
		say = append(say, resp.Message)
		le.Notified = true
	}
	if resp.Notice != "" && agent.Shows(event) {
		// rewind gives it once (and only where it shows).
		say = append(say, resp.Notice)
		le.Rewound = true
	}
	if len(say) == 0 {
		return nil
	}
	return e.out.Encode(map[string]string{"systemMessage": strings.Join(say, "\n")})
}

// rewindPath is the rewind binary installed beside rewind-hook: never one
// found through PATH, which inside an agent's hook is the user's.
func rewindPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(self), "rewind")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("rewind is not installed beside rewind-hook (%s); reinstall with install.sh", p)
	}
	return p, nil
}

// callRewind runs `rewind hook` with req on stdin and returns its answer. At
// the deadline rewind gets SIGTERM, and a moment later SIGKILL.
func callRewind(ctx context.Context, req hookd.Request) (hookd.Response, error) {
	var resp hookd.Response
	bin, err := rewindPath()
	if err != nil {
		return resp, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return resp, err
	}
	cmd := exec.CommandContext(ctx, bin, "hook")
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 300 * time.Millisecond
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return resp, fmt.Errorf("rewind hook did not finish in time; checkpoint abandoned")
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if err != nil {
		// One line: rewind's error line (its hints follow it), else its
		// first line, else how it ended.
		msg := ""
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(line, "rewind: error: ") || msg == "" {
				msg = strings.TrimSpace(line)
			}
			if strings.HasPrefix(line, "rewind: error: ") {
				break
			}
		}
		if msg == "" {
			msg = err.Error()
		}
		return resp, fmt.Errorf("rewind hook: %s", strings.TrimPrefix(msg, "rewind: error: "))
	}
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil || resp.Type != "hook" {
		return resp, fmt.Errorf("rewind hook answered %q, not a hook response", strings.TrimSpace(stdout.String()))
	}
	return resp, nil
}

// maxLog is the size at which hook.log moves to hook.log.1.
const maxLog = 1 << 20

func appendLog(home string, le logEntry) {
	dir := layout.Logs(layout.Home(home))
	if err := os.MkdirAll(dir, layout.DirMode); err != nil {
		return
	}
	p := filepath.Join(dir, "hook.log")
	if st, err := os.Stat(p); err == nil && st.Size() > maxLog {
		os.Rename(p, p+".1")
	}
	line, err := json.Marshal(le)
	if err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, layout.FileMode)
	if err != nil {
		return
	}
	f.Write(append(line, '\n'))
	f.Close()
}

// firstNotice reports whether the person has not been told about project yet, and records that
// they now are (~/.rewind/logs/notices, a line per project). Any trouble answers false: a notice
// is a courtesy, never a reason to fail or to repeat.
func firstNotice(home, project string) bool {
	p := filepath.Join(layout.Logs(layout.Home(home)), "notices")
	if b, err := os.ReadFile(p); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l == project {
				return false
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err := os.MkdirAll(filepath.Dir(p), layout.DirMode); err != nil {
		return false
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, layout.FileMode)
	if err != nil {
		return false
	}
	_, err = f.WriteString(project + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil
}
