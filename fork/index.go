package fork

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/jsonl"
)

// IndexPath is the agent's index of session names that a fork at fork is
// titled in, for a dialect whose fork title method is "index_line"
// (Codex's session_index.jsonl); "" for any other dialect.
func IndexPath(d *jsonl.Dialect, fork string) (string, error) {
	if d.Title.Fork.Method != "index_line" {
		return "", nil
	}
	return expand(d.Title.Fork.Index, map[string]string{"fork_dir": filepath.Dir(fork)}, filepath.Dir(fork), time.Now())
}

// ForgetTitles takes out of the index at index (see IndexPath) the title
// lines Rewind appended for forks: those whose session id is a key of
// titles and whose title is its value, as Rewind wrote them. Every other
// line — the agent's own, a title the user gave the session since — is kept
// byte for byte. The index is rewritten whole (temp, fsync, rename) with
// its mode, only when a line goes; a missing index is left missing. It
// returns how many lines went.
func ForgetTitles(d *jsonl.Dialect, index string, titles map[string]string) (int, error) {
	idKey, titleKey := indexKeys(d)
	if idKey == "" || titleKey == "" || len(titles) == 0 {
		return 0, nil
	}
	src, err := os.ReadFile(index)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(index)
	if err != nil {
		return 0, err
	}
	var out bytes.Buffer
	gone := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(scanLinesKeepingEnds)
	for sc.Scan() {
		line := sc.Bytes()
		var fields map[string]json.RawMessage
		if json.Unmarshal(bytes.TrimSpace(line), &fields) == nil {
			var id, title string
			if json.Unmarshal(fields[idKey], &id) == nil && json.Unmarshal(fields[titleKey], &title) == nil {
				if want, ok := titles[id]; ok && id != "" && title == want {
					gone++
					continue
				}
			}
		}
		out.Write(line)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", index, err)
	}
	if gone == 0 {
		return 0, nil
	}
	if err := durable.WriteFile(index, out.Bytes(), fi.Mode().Perm(), durable.KeepOwner); err != nil {
		return 0, err
	}
	return gone, nil
}

// indexKeys are the fields of d's index line that hold the session id and
// the title (the keys whose templates are {session_id} and {title}).
func indexKeys(d *jsonl.Dialect) (id, title string) {
	var line map[string]json.RawMessage
	if json.Unmarshal(d.Title.Fork.Line, &line) != nil {
		return "", ""
	}
	for k, v := range line {
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		switch s {
		case "{session_id}":
			id = k
		case "{title}":
			title = k
		}
	}
	return id, title
}

// scanLinesKeepingEnds is bufio.ScanLines that keeps each line's newline,
// so that what is kept is written back as it was.
func scanLinesKeepingEnds(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
