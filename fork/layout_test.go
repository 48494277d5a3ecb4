package fork

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	now := time.Date(2026, 11, 23, 14, 5, 9, 0, time.FixedZone("X", 3600))
	vars := map[string]string{"dir": "/h/.codex/sessions/2026/11/20", "id": "abc", "id8": "abc"}
	for _, tt := range []struct{ tmpl, want string }{
		{"{dir}/{id}.jsonl", "/h/.codex/sessions/2026/11/20/abc.jsonl"},
		{"{up:3}/{now:2006/01/02}/rollout-{now:2006-01-02T15-04-05}-{id}.jsonl", "/h/.codex/sessions/2026/11/23/rollout-2026-11-23T14-05-09-abc.jsonl"},
		{"{dir}/{utc:2006-01-02T15-04}-{id8}.jsonl", "/h/.codex/sessions/2026/11/20/2026-11-23T13-05-abc.jsonl"},
		{"{up:1}/{id}/events.jsonl", "/h/.codex/sessions/2026/11/abc/events.jsonl"},
	} {
		got, err := expand(tt.tmpl, vars, vars["dir"], now)
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
	for _, bad := range []string{"{nosuch}", "{up:x}"} {
		if _, err := expand(bad, vars, "/", now); err == nil {
			t.Errorf("expand(%q): no error", bad)
		}
	}
}

// TestIDReplacer: every occurrence is replaced, also one cut across writes of any size.
func TestIDReplacer(t *testing.T) {
	oldID, newID := "11111111-2222-3333-4444-555555555555", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	src := strings.Repeat(`{"session_id":"`+oldID+`","x":"`+oldID[:10]+`"}`+"\n", 50) + oldID
	want := strings.ReplaceAll(src, oldID, newID)
	for _, chunk := range []int{1, 7, 35, 36, 37, 4096} {
		var out bytes.Buffer
		r, err := newIDReplacer(&out, oldID, newID)
		if err != nil {
			t.Fatal(err)
		}
		for rest := src; rest != ""; {
			n := min(chunk, len(rest))
			if _, err := r.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := r.flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("chunk %d: replaced %d, output differs", chunk, r.n)
		}
		if out.Len() != len(src) {
			t.Errorf("chunk %d: the output's length moved", chunk)
		}
	}
	if _, err := newIDReplacer(nil, "short", "longer"); err == nil {
		t.Error("ids of different lengths: no error")
	}
}

func TestSessionIDOf(t *testing.T) {
	for _, tt := range []struct{ from, want string }{
		{"/p/0f7e3b9e-1111-4222-8333-944455556666.jsonl", "0f7e3b9e-1111-4222-8333-944455556666"},
		{"/s/2026/11/23/rollout-2026-11-23T10-00-00-0f7e3b9e-1111-4222-8333-944455556666.jsonl", "0f7e3b9e-1111-4222-8333-944455556666"},
		{"/s/0f7e3b9e-1111-4222-8333-944455556666/events.jsonl", "0f7e3b9e-1111-4222-8333-944455556666"},
		{"/p/plain.jsonl", "plain"},
	} {
		if got := sessionIDOf(nil, tt.from, nil); got != tt.want {
			t.Errorf("sessionIDOf(%q) = %q, want %q", tt.from, got, tt.want)
		}
	}
}

// TestRand8: a fork's file-name tag is eight hex digits, random, and never its session's id8,
// whatever case that is in.
func TestRand8(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		other := []string{"0f7e3b9e", "ABCDEF01", ""}[i%3]
		s := rand8(other)
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(s) || strings.EqualFold(s, other) {
			t.Fatalf("rand8(%q) = %q", other, s)
		}
		seen[s] = true
	}
	if len(seen) < 190 {
		t.Errorf("%d distinct tags in 200", len(seen))
	}
	// The template's {rand8} is filled when forks are named (forkPath).
	now := time.Date(2026, 11, 23, 14, 5, 9, 0, time.UTC)
	got, err := expand("{dir}/session-{utcfile:2006-01-02T15:04}-{rand8}.jsonl", map[string]string{"dir": "/c", "rand8": "1a2b3c4d"}, "/c", now)
	if err != nil || got != "/c/session-2026-11-23T14-05-1a2b3c4d.jsonl" {
		t.Errorf("expand = %q, %v", got, err)
	}
}
