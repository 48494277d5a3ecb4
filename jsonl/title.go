package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Title is a session title found in a transcript.
type Title struct {
	Text   string `json:"title"`
	Offset int64  `json:"offset"` // the start of the line that holds it
	Field  string `json:"field"`  // the dotted path of the title in that line
}

// Title finds the session's title: the newest line of the highest-ranked title source (Claude:
// the newest custom-title beats any ai-title; Droid: session_start.title). It reads the whole
// file, since titles can be written anywhere. ok is false when there is none.
func (t *Transcript) Title(ctx context.Context) (title Title, ok bool, err error) {
	if t.Dialect == nil || len(t.Dialect.Title.Sources) == 0 {
		return Title{}, false, nil
	}
	bestRank := -1
	i := 0
	err = t.Lines(0, func(l Line) bool {
		if i++; i%256 == 0 && ctx.Err() != nil {
			return false
		}
		c := Clean(l.Data)
		for _, s := range t.Dialect.Title.Sources {
			if s.Rank < bestRank || !mayMatch(c, s.Match) {
				continue
			}
			o := parseObject(c)
			if o == nil || !s.Match.holds(o, nil) {
				continue
			}
			if v := o.str(s.Field); v != "" {
				title, ok, bestRank = Title{Text: v, Offset: l.Offset, Field: s.Field}, true, s.Rank
			}
		}
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	return title, ok, err
}

// ForkTitle returns title marked as a fork's (the dialect's prefix, "[Fork] "), without
// doubling a prefix that is already there.
func (d *Dialect) ForkTitle(title string) string {
	p := d.Title.Fork.Prefix
	if p == "" || strings.HasPrefix(title, p) {
		return title
	}
	return p + title
}

// ForkTitleLine returns the line (with its newline) a fork appends to carry its title, for
// dialects whose fork method is "append_line" (to the fork) or "index_line" (to the agent's
// index of names); ok is false for other methods. title is used as
// given (apply ForkTitle first); sessionID is the fork's own session id. vars fill the line's
// other placeholders: {parent_id} (in a tree dialect, the line the fork's conversation ends
// at), {entry_id} (a new id for the line itself), {timestamp}.
func (d *Dialect) ForkTitleLine(title, sessionID string, vars map[string]string) (line []byte, ok bool, err error) {
	if m := d.Title.Fork.Method; m != "append_line" && m != "index_line" || len(d.Title.Fork.Line) == 0 {
		return nil, false, nil
	}
	// Compact, as the agents write their lines.
	var compact bytes.Buffer
	if err := json.Compact(&compact, d.Title.Fork.Line); err != nil {
		return nil, false, fmt.Errorf("dialect %s: fork title line is not valid JSON", d.Name)
	}
	line = compact.Bytes()
	line = bytes.ReplaceAll(line, []byte("{title}"), jsonStringBody(title))
	line = bytes.ReplaceAll(line, []byte("{session_id}"), jsonStringBody(sessionID))
	for k, v := range vars {
		line = bytes.ReplaceAll(line, []byte("{"+k+"}"), jsonStringBody(v))
	}
	if !json.Valid(line) {
		return nil, false, fmt.Errorf("dialect %s: fork title line is not valid JSON", d.Name)
	}
	return append(line, '\n'), true, nil
}

// jsonStringBody is s encoded as a JSON string, without the quotes.
func jsonStringBody(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := bytes.TrimSpace(b.Bytes())
	return out[1 : len(out)-1]
}
