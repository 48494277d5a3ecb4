package hookd

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"rewind.dev/internal/durable"
)

// An agent without shell hooks (pi's extensions, OpenCode's plugins) gets a
// bridge: a small file of the agent's own language, shipped here, that the
// agent loads from its extension folder. It turns the agent's events into
// the same hook payloads rewind-hook reads on stdin and runs rewind-hook
// with them, catching every failure (both agents block a tool when a
// handler throws) and bounding the wait.

//go:embed bridges/*
var bridgeFS embed.FS

// bridgeMark is a line every bridge file holds: a file without it is not
// Rewind's, and is never replaced or removed.
const bridgeMark = "rewind-bridge: do not edit"

// hookPlaceholder is replaced by the absolute path of rewind-hook, quoted as
// a JavaScript string.
const hookPlaceholder = `"__REWIND_HOOK__"`

// bridgeSource is agent a's bridge, running hookPath.
func bridgeSource(a *Agent, hookPath string) ([]byte, error) {
	src, err := bridgeFS.ReadFile(path.Join("bridges", a.HookFile.Bridge))
	if err != nil {
		return nil, fmt.Errorf("agent %s: no bridge %q: %w", a.Name, a.HookFile.Bridge, err)
	}
	if !bytes.Contains(src, []byte(hookPlaceholder)) || !bytes.Contains(src, []byte(bridgeMark)) {
		return nil, fmt.Errorf("bridge %s lacks its placeholder or mark", a.HookFile.Bridge)
	}
	return bytes.ReplaceAll(src, []byte(hookPlaceholder), []byte(strconv.Quote(hookPath))), nil
}

// isBridge reports whether the file at p is a Rewind bridge (nil error and
// false when it does not exist).
func isBridge(p string) (exists, ours bool, err error) {
	b, err := readFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, bytes.Contains(b, []byte(bridgeMark)), nil
}

// installBridge writes a's bridge at p (atomically), unless the same bytes
// are there already. A file there that is not Rewind's is refused.
func installBridge(p string, a *Agent, hookPath string) (Change, error) {
	c := Change{Path: p, Target: p}
	src, err := bridgeSource(a, hookPath)
	if err != nil {
		return c, err
	}
	exists, ours, err := isBridge(p)
	if err != nil {
		return c, err
	}
	if exists && !ours {
		return c, fmt.Errorf("%s exists and is not Rewind's bridge; move it away first", p)
	}
	if old, err := readFile(p); err == nil && bytes.Equal(old, src) {
		return c, nil
	}
	if !exists {
		made, err := makeDirs(filepath.Dir(p), 0o755)
		if err != nil {
			return c, err
		}
		if err := markMade(p, made); err != nil {
			return c, err
		}
	}
	if err := durable.WriteFile(p, src, 0o644, durable.KeepOwner); err != nil {
		return c, err
	}
	c.Changed, c.Added = true, 1
	if exists {
		c.Removed = 1
	}
	return c, nil
}

// removeBridge removes a's bridge at p when it is Rewind's, with what
// Rewind made for it (removeMade: the folders it made for it, left empty).
func removeBridge(p string, a *Agent) (Change, error) {
	c := Change{Path: p, Target: p}
	exists, ours, err := isBridge(p)
	if err != nil || !exists {
		return c, err
	}
	if !ours {
		return c, nil // someone else's file of that name: not ours to remove
	}
	if err := durable.FaultOr("remove", p, func() error { return os.Remove(p) }); err != nil {
		return c, err
	}
	if err := durable.SyncDir(filepath.Dir(p)); err != nil {
		return c, err
	}
	removeMade(p)
	c.Changed, c.Removed, c.RemovedFile = true, 1, true
	return c, nil
}

// bridgeEntries reports a's bridge at p as one registration.
func bridgeEntries(p string, a *Agent) ([]Entry, error) {
	exists, ours, err := isBridge(p)
	if err != nil || !exists || !ours {
		return nil, err
	}
	return []Entry{{Event: "bridge", Command: p}}, nil
}
