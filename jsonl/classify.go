package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Kind is what a line is.
type Kind int

const (
	KindBlank   Kind = iota // empty, or only white space, CR and NUL bytes
	KindGarbage             // not a JSON object: skipped and counted, never fatal
	KindEvent               // a JSON object that is not a user prompt
	KindPrompt              // a real user prompt: one turn
)

func (k Kind) String() string {
	switch k {
	case KindBlank:
		return "blank"
	case KindGarbage:
		return "garbage"
	case KindEvent:
		return "event"
	case KindPrompt:
		return "prompt"
	}
	return "unknown"
}

// TextLimit is how many characters of a prompt's text a Turn carries.
const TextLimit = 200

// Event is what Classify learns from one line.
type Event struct {
	Kind      Kind
	Type      string // the line's "type" value, when it is a string
	ID        string // the dialect's event id, "" when the line has none
	Timestamp string // the dialect's timestamp, "" when absent or not a string
	Text      string // prompts only: the prompt's text, at most TextLimit characters
}

// Clean strips what surrounds a line's JSON: white space, CR (CRLF files) and NUL runs (holes
// left where a file was truncated under a writer).
func Clean(line []byte) []byte {
	return bytes.Trim(line, " \t\r\n\x00")
}

// Classify tells what one line (without its newline) is in this dialect. It never panics and
// never fails: bad input is KindGarbage.
func (d *Dialect) Classify(line []byte) Event {
	ev, _ := d.classify(line, false)
	return ev
}

// classify parses line and classifies it. With promptOnly, a line that cannot be a prompt (it
// lacks the prompt rule's needles) is not parsed at all and comes back as KindEvent without
// fields; the scanners use this to pass over large tool output cheaply.
func (d *Dialect) classify(line []byte, promptOnly bool) (Event, *object) {
	line = Clean(line)
	if len(line) == 0 {
		return Event{Kind: KindBlank}, nil
	}
	if line[0] != '{' {
		return Event{Kind: KindGarbage}, nil
	}
	if promptOnly && !d.mayBePrompt(line) {
		return Event{Kind: KindEvent}, nil // not validated: cheap "not a prompt"
	}
	o := parseObject(line)
	if o == nil {
		return Event{Kind: KindGarbage}, nil
	}
	ev := Event{Kind: KindEvent, Type: o.str("type")}
	if d.IDField != "" {
		ev.ID = o.str(d.IDField)
	}
	if d.TimestampField != "" {
		ev.Timestamp = o.str(d.TimestampField)
	}
	if text, ok := d.promptText(o); ok {
		ev.Kind = KindPrompt
		ev.Text = text
	}
	return ev, o
}

// mayBePrompt is the cheap test before parsing: every string the prompt rule requires must
// appear in the line's bytes.
func (d *Dialect) mayBePrompt(line []byte) bool {
	return d.Prompt.mayHold(line)
}

// promptText applies the prompt rule to o; it returns the prompt's display text and whether o
// is a prompt.
func (d *Dialect) promptText(o *object) (string, bool) {
	r := &d.Prompt
	if !r.holds(o) {
		return "", false
	}
	var pieces []string
	image, attachment := false, false
	for _, p := range r.Content {
		raw, ok := o.get(p)
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		switch raw[0] {
		case '"':
			pieces = append(pieces, rawString(raw))
		case '[':
			var blocks []json.RawMessage
			if json.Unmarshal(raw, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				bo := parseObject(b)
				if bo == nil {
					if s := rawString(b); s != "" {
						pieces = append(pieces, s)
					}
					continue
				}
				t, textKey := r.blockType(bo)
				switch {
				case flagged(bo, r.SkipBlockFlags):
				case contains(r.RejectBlockTypes, t):
					return "", false
				case contains(r.TextBlockTypes, t):
					pieces = append(pieces, bo.str(textKey))
				case contains(r.ImageBlockTypes, t):
					image = true
				}
			}
		}
	}
	for _, p := range r.Attachments {
		raw, ok := o.get(p)
		if !ok {
			continue
		}
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil && len(arr) > 0 {
			attachment = true
		}
	}
	text := strings.Join(pieces, "\n")
	text = stripWrappers(text, r.StripLeadingWrappers)
	text = strings.TrimLeft(text, " \t\r\n")
	for _, p := range r.RejectTextPrefixes {
		if strings.HasPrefix(text, p) {
			return "", false
		}
	}
	if strings.TrimSpace(text) == "" {
		switch {
		case image:
			return "[image]", true
		case attachment:
			return "[attachment]", true
		}
		return "", false
	}
	return truncateRunes(text, TextLimit), true
}

// blockType is a content block's type and the member holding its text: its "type" and "text",
// or, for a block without a "type" (Gemini's parts: {"text":…}, {"inlineData":…},
// {"functionResponse":…}), the first of its members that the rule names as a block type, which
// then holds the text too. "" when the block has neither.
func (r *PromptRule) blockType(bo *object) (typ, textKey string) {
	if t := bo.str("type"); t != "" {
		return t, "text"
	}
	for _, types := range [][]string{r.RejectBlockTypes, r.TextBlockTypes, r.ImageBlockTypes} {
		for _, t := range types {
			if _, ok := bo.fields[t]; ok {
				return t, t
			}
		}
	}
	return "", "text"
}

// stripWrappers removes leading <open>…</close> blocks (and the white space around them).
func stripWrappers(text string, wrappers [][2]string) string {
	for changed := true; changed; {
		changed = false
		t := strings.TrimLeft(text, " \t\r\n")
		for _, w := range wrappers {
			if w[0] == "" || !strings.HasPrefix(t, w[0]) {
				continue
			}
			i := strings.Index(t[len(w[0]):], w[1])
			if i < 0 {
				return "" // an unclosed wrapper: all of it is injected context
			}
			text = t[len(w[0])+i+len(w[1]):]
			changed = true
			break
		}
	}
	return text
}

// truncateRunes cuts s to at most n characters, never inside a UTF-8 sequence; invalid UTF-8
// is replaced so the result always encodes as valid JSON text.
func truncateRunes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flagged reports whether one of the fields is true in o.
func flagged(o *object, fields []string) bool {
	for _, f := range fields {
		if raw, ok := o.get(f); ok && rawEqual(raw, json.RawMessage("true")) {
			return true
		}
	}
	return false
}
