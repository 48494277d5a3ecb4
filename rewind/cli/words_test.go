package cli

import (
	"testing"
	"time"

	"rewind.dev/internal/cmdline"
)

// The words the commands print for ages, sizes, counts and paths.
func TestWords(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct{ got, want string }{
		{ago(now.Add(-5 * time.Second)), "5s ago"},
		{ago(now.Add(-3 * time.Minute)), "3m ago"},
		{ago(now.Add(-47 * time.Hour)), "47h ago"},
		{ago(now.Add(-72 * time.Hour)), "3d ago"},
		{humanBytes(512), "512 B"},
		{humanBytes(1536), "1.5 KiB"},
		{humanBytes(3 << 20), "3.0 MiB"},
		{humanBytes(2 << 30), "2.0 GiB"},
		{ordinal(1), "1st"}, {ordinal(2), "2nd"}, {ordinal(3), "3rd"}, {ordinal(4), "4th"},
		{ordinal(11), "11th"}, {ordinal(12), "12th"}, {ordinal(13), "13th"}, {ordinal(21), "21st"}, {ordinal(112), "112th"},
		{pronoun(1), "it"}, {pronoun(2), "they"},
		{oneLine("  a\n\tb  c ", 10), "a b c"},
		{oneLine("héllo wörld", 6), "héllo…"},
		// cmdline.ShellQuote leaves a plain path alone and quotes anything a shell would read.
		{cmdline.ShellQuote("/home/me/.agent/rewind/x_1.jsonl"), "/home/me/.agent/rewind/x_1.jsonl"},
		{cmdline.ShellQuote("/a b/c"), "'/a b/c'"},
		{cmdline.ShellQuote("/it's"), `'/it'\''s'`},
		{cmdline.ShellQuote(""), "''"},
		{cmdline.ShellQuote("$HOME"), "'$HOME'"},
		// quoted puts a title or label in quotes as %q would, with git's escapes.
		{quoted("plain"), `"plain"`},
		{quoted(`say "hi"`), `"say \"hi\""`},
		{quoted("red\x1b[31m"), `"red\033[31m"`},
		{quoted("日本"), `"日本"`},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
