package store

import (
	"os"
	"strings"
	"testing"

	"rewind.dev/hookd"
)

// rewoundSetup is a Claude session S with a prompt-hook checkpoint before its last prompt and
// that prompt answered since (the tree changed): back 1 --both then rewinds the code under S
// for a fork.
func rewoundSetup(t *testing.T) (s *Store, session, tp string) {
	t.Helper()
	s = envProject(t)
	session = "1cbbde27-5fcc-4652-9047-4142f5f1912c"
	tp = agentTranscript(t, session+".jsonl")
	data := fixtureBytes(t)
	if err := os.WriteFile(tp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := turns(t, tp)
	if err := os.WriteFile(tp, data[:ts[len(ts)-1].PromptOffset], 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, s.Project, "state.txt", "before the last prompt")
	if _, err := s.Hook(ctx, promptHook(session, tp)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, s.Project, "state.txt", "after the last prompt")
	return s, session, tp
}

// promptHook is the request of a Claude prompt hook of session in transcript tp.
func promptHook(session, tp string) hookd.Request {
	return hookd.Request{Version: 1, Event: hookd.EventPrompt, Agent: "claude", ProjectDir: "", SessionID: session, TranscriptPath: tp, Checkpoint: hookd.CheckpointAlways}
}

// notice asks the store as req's hook does, and returns what the person is told.
func notice(t *testing.T, s *Store, req hookd.Request) string {
	t.Helper()
	req.ProjectDir = s.Project
	resp, err := s.Hook(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Notice
}

// TestBackBothTellsTheSessionLeftBehind: after back 1 --both the session the code was rewound
// under is told at its next prompt, once, what happened and how to get the code back; the
// fork's own session, other sessions and events that show no message are not.
func TestBackBothTellsTheSessionLeftBehind(t *testing.T) {
	s, session, tp := rewoundSetup(t)
	res, err := s.Back(ctx, BackOptions{N: 1, Both: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.Project+"/state.txt"); got != "before the last prompt" {
		t.Fatalf("back 1 --both: tree %q", got)
	}
	fork := res.Fork.SessionID

	if got := notice(t, s, promptHook(fork, res.Fork.Path)); got != "" {
		t.Errorf("the fork's own session is told %q", got)
	}
	if got := notice(t, s, promptHook("2a2b3c4d-0000-4000-8000-000000000000", agentTranscript(t, "2a2b3c4d-0000-4000-8000-000000000000.jsonl"))); got != "" {
		t.Errorf("another session is told %q", got)
	}
	tool := promptHook(session, tp)
	tool.Event, tool.Tool, tool.Checkpoint = hookd.EventPreTool, "Bash", hookd.CheckpointNone
	if got := notice(t, s, tool); got != "" {
		t.Errorf("a tool event, which shows no message, is told %q", got)
	}

	got := notice(t, s, promptHook(session, tp))
	t.Logf("told: %s", got)
	for _, want := range []string{"the code of this project was rewound to checkpoint " + res.Checkpoint, "for the fork " + fork,
		"rewind back 1 --both", "this session's conversation was not", "'rewind undo-restore' brings the code back", "'claude --resume " + fork + "' opens the fork"} {
		if !strings.Contains(got, want) {
			t.Errorf("the session left behind is told %q, which lacks %q", got, want)
		}
	}
	if again := notice(t, s, promptHook(session, tp)); again != "" {
		t.Errorf("told a second time: %q", again)
	}
}

// TestRewoundSessionKnownByItsTranscript: a hook that names the session's transcript but no id
// (as some agents' do before their first line) is told too, at the session's start.
func TestRewoundSessionKnownByItsTranscript(t *testing.T) {
	s, _, tp := rewoundSetup(t)
	if _, err := s.Back(ctx, BackOptions{N: 1, Both: true}); err != nil {
		t.Fatal(err)
	}
	start := promptHook("", tp)
	start.Event = hookd.EventSessionStart
	if got := notice(t, s, start); !strings.Contains(got, "was rewound to checkpoint") {
		t.Errorf("the session's start (named by its transcript) is told %q", got)
	}
}

// TestRewoundNoticeFollowsTheCode: a notice waits only while the code is as the restore left
// it: undo-restore takes it away; back without --both (the code untouched) makes none; a
// restore of code and conversation makes one that names it.
func TestRewoundNoticeFollowsTheCode(t *testing.T) {
	s, session, tp := rewoundSetup(t)
	if _, err := s.Back(ctx, BackOptions{N: 1, Both: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := notice(t, s, promptHook(session, tp)); got != "" {
		t.Errorf("after undo-restore the session is told %q", got)
	}

	if _, err := s.Back(ctx, BackOptions{N: 1}); err != nil {
		t.Fatal(err)
	}
	if got := notice(t, s, promptHook(session, tp)); got != "" {
		t.Errorf("after back without --both the session is told %q", got)
	}

	cps, _, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var cp *Checkpoint
	for _, c := range cps {
		if c.Trigger.Event == hookd.EventPrompt && c.Transcript != nil && c.Transcript.SessionID == session {
			cp = c
			break
		}
	}
	if cp == nil {
		t.Fatal("no prompt checkpoint of the session")
	}
	if _, err := s.Restore(ctx, cp, RestoreOptions{Code: true, Context: ContextFork}); err != nil {
		t.Fatal(err)
	}
	if got := notice(t, s, promptHook(session, tp)); !strings.Contains(got, "(rewind restore "+cp.ID+",") {
		t.Errorf("after restore of code and conversation the session is told %q", got)
	}
}
