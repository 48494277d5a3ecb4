package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/bundle"
	"rewind.dev/snap"
)

// TriggerImport is the checkpoint 'rewind import' records of what it imported.
const TriggerImport TriggerKind = "import"

// KindImport is an import into a folder that was not empty (--force).
const KindImport RestoreKind = "import"

// ImportOptions say where 'rewind import' puts an export archive.
type ImportOptions struct {
	// Into is the folder the tree goes to; "" for a new folder named after
	// the export's source folder, in Cwd.
	Into string
	Cwd  string
	// Force imports into a folder that is not empty, after a backup
	// checkpoint of it ('rewind undo-restore' brings it back).
	Force bool
	// SHA256, when set, is the archive's SHA-256 as its sender gave it: an
	// archive that differs is refused.
	SHA256 string
	// Homes are the homes of the folder's store; zero: those the
	// environment names (EnvHomes).
	Homes Homes
}

// ImportResult is what Import did.
type ImportResult struct {
	Type         string              `json:"type"`   // "import"
	SHA256       string              `json:"sha256"` // of the archive
	Dir          string              `json:"dir"`
	StoreCreated bool                `json:"store_created"`
	Source       string              `json:"source_folder"`
	From         string              `json:"from_checkpoint"`
	Checkpoint   string              `json:"checkpoint,omitempty"`
	Backup       string              `json:"backup_checkpoint,omitempty"`
	Files        int                 `json:"files"`
	Code         *snap.RestoreResult `json:"code,omitempty"`
	Agent        string              `json:"agent,omitempty"`
	AgentVersion string              `json:"agent_version,omitempty"`
	SessionID    string              `json:"session_id,omitempty"`
	Transcript   string              `json:"transcript,omitempty"` // the installed session file
	Title        string              `json:"title,omitempty"`
	// Resume opens the imported session in its agent, run in Dir;
	// ResumeCommand is the same with the cd before it.
	Resume        string   `json:"resume,omitempty"`
	ResumeCommand string   `json:"resume_command,omitempty"`
	Redacted      []string `json:"redacted,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// NotEmptyError is an import into a folder that holds something, without
// Force. Nothing was written.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("%s is not empty; nothing was written", e.Dir)
}

// UnsupportedAgentError is an import whose tree was restored but whose
// conversation Rewind cannot yet install for its agent: the transcript is
// kept at Transcript.
type UnsupportedAgentError struct {
	Agent, Dir, Transcript string
}

func (e *UnsupportedAgentError) Error() string {
	return fmt.Sprintf("import of %s sessions is not supported yet: the tree was restored into %s; the transcript is at %s", e.Agent, e.Dir, e.Transcript)
}

// Import checks the export archive at file whole, restores its tree into
// a folder, installs its conversation as a new session of its agent for
// that folder, and records a checkpoint of both in the folder's store
// (made when there is none).
func Import(ctx context.Context, file string, o ImportOptions) (*ImportResult, error) {
	b, err := bundle.Open(ctx, file)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if o.SHA256 != "" && !strings.EqualFold(o.SHA256, b.SHA256) {
		return nil, &bundle.Error{Path: file, Reason: fmt.Sprintf("its SHA-256 is %s, not the %s it was to have", b.SHA256, o.SHA256)}
	}
	dir := o.Into
	if dir == "" {
		dir = filepath.Join(o.Cwd, importFolder(b.Info))
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	res := &ImportResult{Type: "import", SHA256: b.SHA256, Dir: dir, Source: b.Info.SourceFolder, From: b.Info.Checkpoint, Files: b.Info.Files,
		Agent: b.Info.Agent, AgentVersion: b.Info.AgentVersion, Redacted: b.Info.Redacted}
	empty, exists, err := folderState(dir)
	if err != nil {
		return nil, err
	}
	if !empty && !o.Force {
		return nil, &NotEmptyError{Dir: dir}
	}
	homes := o.Homes
	if homes == (Homes{}) {
		homes = EnvHomes()
	}
	var s *Store
	var adopt *snap.ArchiveIndex
	if empty {
		// A hostile member is refused by the restore's first phase, before
		// the tree changes; a folder made here is removed again.
		if !exists {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		// The restore indexes the archive as it reads it (each file's hash
		// and place): the import's checkpoint takes it as its snapshot.
		code, err := snap.Restore(ctx, dir, b.Tree, snap.RestoreOptions{Index: true})
		if code != nil {
			adopt = code.Index
		}
		if err != nil {
			if !exists {
				os.RemoveAll(dir) // made here, and nothing of the user's is in it
			}
			var ae *snap.ArchiveError
			if errors.As(err, &ae) {
				return nil, &bundle.Error{Path: file, Reason: err.Error()}
			}
			return nil, err
		}
		res.Code = code
		if dir, err = filepath.EvalSymlinks(dir); err == nil {
			res.Dir = dir
		}
		if s, res.StoreCreated, err = openOrInit(homes, res.Dir); err != nil {
			return res, err
		}
	} else {
		// (The archive's tree passed a restore's checks in bundle.Open.)
		if dir, err = filepath.EvalSymlinks(dir); err == nil {
			res.Dir = dir
		}
		if s, res.StoreCreated, err = openOrInit(homes, res.Dir); err != nil {
			return nil, err
		}
		if err := s.importTree(ctx, b, res); err != nil {
			return res, err
		}
	}
	dir = res.Dir

	l, err := s.Lock(ctx)
	if err != nil {
		return res, err
	}
	defer l.Unlock()
	save := SaveOptions{Description: "imported " + b.Info.Checkpoint + " from " + b.Info.SourceFolder,
		Trigger: Trigger{Kind: TriggerImport, Agent: b.Info.Agent}, adopt: adopt}
	var unsupported error
	if b.Transcript != "" {
		if unsupported, err = s.importSession(ctx, b, dir, res, &save); err != nil {
			return res, err
		}
	}
	cp, err := s.SaveLocked(ctx, save)
	if err != nil {
		return res, fmt.Errorf("record the import's checkpoint: %w", err)
	}
	res.Checkpoint = cp.ID
	return res, unsupported
}

// importSession installs b's conversation as a session of the agent's for the project dir,
// records it as the store's session and names it in res and in the import's save. An agent
// whose sessions cannot move keeps the transcript in the store's backups instead: unsupported
// then says so, and the import goes on.
func (s *Store) importSession(ctx context.Context, b *bundle.Archive, dir string, res *ImportResult, save *SaveOptions) (unsupported, err error) {
	inst, err := installSession(ctx, b, dir)
	var um *fork.UnmovableError
	switch {
	case errors.As(err, &um):
		kept := filepath.Join(s.backupDir(), "imported-"+b.Info.Checkpoint+".jsonl.gz")
		if err := copyFile(b.Transcript, kept, layout.FileMode, durable.NoReplace); err != nil {
			return nil, err
		}
		return &UnsupportedAgentError{Agent: b.Info.Agent, Dir: dir, Transcript: kept}, nil
	case err != nil:
		return nil, fmt.Errorf("install the conversation: %w", err)
	}
	res.SessionID, res.Transcript, res.Title = inst.SessionID, inst.Path, inst.Title
	res.Warnings = append(res.Warnings, inst.Warnings...)
	res.Resume = ResumeHint(b.Info.Agent, inst.SessionID)
	res.ResumeCommand = "cd " + cmdline.ShellQuote(dir) + " && " + res.Resume
	save.TranscriptPath, save.Agent, save.SessionID = inst.Path, b.Info.Agent, inst.SessionID
	return nil, s.SetLastSession(layout.Session{Agent: b.Info.Agent, TranscriptPath: inst.Path, SessionID: inst.SessionID})
}

// importTree restores b's tree over a project that holds something, after
// a backup checkpoint, as a restore does: undo-restore brings it back.
func (s *Store) importTree(ctx context.Context, b *bundle.Archive, res *ImportResult) error {
	l, err := s.Lock(ctx)
	if err != nil {
		return err
	}
	defer l.Unlock()
	walk, err := s.walkOptions()
	if err != nil {
		return err
	}
	k := s.newChecker(ctx)
	defer k.Save()
	var r TreeChange
	c := change{
		backup: SaveOptions{Description: "before import of " + b.Info.Checkpoint + " from " + b.Info.SourceFolder, UseSession: true, TranscriptBestEffort: true},
		entry:  HistoryEntry{Kind: KindImport, Code: true},
		treeFrom: func(*Checkpoint) (*snap.RestoreResult, error) {
			return snap.Restore(ctx, s.Project, b.Tree, snap.RestoreOptions{Walk: walk}.WithSpillAt(s.spillAt))
		},
	}
	err = s.apply(ctx, k, c, &r, nil)
	res.Backup, res.Code = r.Backup, r.Code
	return err
}

// openOrInit opens dir's store in the homes h, or makes one as 'rewind
// init' does.
func openOrInit(h Homes, dir string) (*Store, bool, error) {
	if s, err := h.Open(dir); err == nil {
		return s, false, nil
	}
	return h.Init(dir, h.DefaultMode())
}

// folderState tells whether dir is empty (or absent) and whether it exists.
func folderState(dir string) (empty, exists bool, err error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, false, err
	}
	if !fi.IsDir() {
		return false, true, fmt.Errorf("%s is not a folder", dir)
	}
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, true, nil
	}
	return false, true, err
}

// installSession writes b's conversation as a new session of its agent
// for dir, through the fork's code path: a new session id in every line,
// the working-folder fields moved to dir, the title marked [Imported]. The
// dialect's import rule names a session of dir's in the agent's folder, and
// the new session goes where a fork of that one would.
func installSession(ctx context.Context, b *bundle.Archive, dir string) (fork.Fork, error) {
	d, err := jsonl.LookupDialect(b.Info.Agent)
	if err != nil || len(d.Fork.CwdFields) == 0 || d.Fork.Import == nil {
		return fork.Fork{}, &fork.UnmovableError{Agent: b.Info.Agent}
	}
	// The session id the lines carry, which the new one replaces: export.json's, else the
	// transcript's file name, else (but for OpenCode's, rewritten whole) one the lines name,
	// else none. Each is held to a session id's grammar: it names a file below.
	isUUID := func(id string) bool { _, err := uuid.Parse(id); return err == nil && layout.ValidSessionID(id) }
	fileID := strings.TrimSuffix(path.Base(strings.ReplaceAll(b.Info.Transcript, "\\", "/")), ".jsonl")
	if !layout.ValidSessionID(fileID) {
		fileID = ""
	}
	old := b.Info.SessionID
	if d.Fork.Method == "opencode_import" { // its ids are no UUIDs
		if old == "" {
			old = fileID
		}
		if old == "" {
			return fork.Fork{}, fmt.Errorf("the archive names no OpenCode session")
		}
	} else {
		if !isUUID(old) {
			old = fileID
		}
		if !isUUID(old) {
			if old = sessionInLines(b.Transcript); !isUUID(old) {
				old = uuid.NewString() // unknown: no id to replace
			}
		}
	}
	from, err := SessionSource(d, dir, old)
	if err != nil {
		return fork.Fork{}, err
	}
	// The session goes beside from, into the agent's own session folders: nowhere else.
	if err := jsonl.CheckTranscriptPath(d.Name, from); err != nil {
		return fork.Fork{}, err
	}
	return fork.Create(ctx, fork.CreateOptions{
		From: from, Snapshots: []string{b.Transcript}, Agent: b.Info.Agent,
		Checkpoint: fork.Checkpoint{Offset: b.Info.TranscriptBytes, PrefixSHA256: b.Info.PrefixSHA256, TailSHA256: b.Info.TailSHA256, Agent: b.Info.Agent},
		Import:     &fork.Import{From: b.Info.SourceFolder, To: dir, Prefix: "[Imported] ", Version: b.Info.AgentVersion},
	})
}

// sessionInLines is the first "sessionId" a line of the gzipped transcript
// at name carries (Claude's lines each name their session), "" when none
// of its first MiB does.
func sessionInLines(name string) string {
	r, err := fork.OpenSnapshots([]string{name})
	if err != nil {
		return ""
	}
	defer r.Close()
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			if _, err := uuid.Parse(line.SessionID); err == nil {
				return line.SessionID
			}
		}
	}
	return ""
}

// SessionSource is the path of a session id of agent d's for the project
// dir, where the agent keeps it (d's import rule; the file need not exist):
// Claude Code's ~/.claude/projects/<dir, escaped>/<id>.jsonl
// ($CLAUDE_CONFIG_DIR honoured), pi's ~/.pi/agent/sessions/--<dir>--/….
func SessionSource(d *jsonl.Dialect, dir, id string) (string, error) {
	r := d.Fork.Import
	if r == nil {
		return "", &fork.UnmovableError{Agent: d.Name}
	}
	home, err := d.AgentHome()
	if err != nil {
		return "", err
	}
	var project string
	switch r.Project {
	case "dashes":
		project = dashedName(dir)
	case "dashed_path":
		project = dashedPath(dir)
	case "registry":
		var err error
		if project, err = geminiProject(home, dir); err != nil {
			return "", fmt.Errorf("%s's project folder for %s: %w", d.Agent.DisplayName, dir, err)
		}
	case "":
	default:
		return "", fmt.Errorf("dialect %s: unknown project naming %q", d.Name, r.Project)
	}
	user, _ := os.UserHomeDir()
	p := d.Agent.Path(strings.NewReplacer("{project}", project, "{id}", id).Replace(r.From), user, os.Getenv)
	if p == "" {
		return "", fmt.Errorf("where %s keeps sessions: no home folder", d.Agent.DisplayName)
	}
	return p, nil
}

// dashedPath is dir as pi names its sessions folder: the leading
// separator dropped, every '/', '\\' and ':' as '-', between "--" and "--".
func dashedPath(dir string) string {
	if strings.HasPrefix(dir, "/") || strings.HasPrefix(dir, "\\") {
		dir = dir[1:]
	}
	return "--" + strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(dir) + "--"
}

// dashedName is dir as Claude Code names its project folder: every character
// but ASCII letters and digits as '-'.
func dashedName(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--") // JavaScript's replace sees two UTF-16 units
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// importFolder is the name of the folder an import makes in the current
// folder when not told where: the export's source folder's own name, when it
// is one a folder may have, else rewind-import-<checkpoint id>.
func importFolder(i bundle.Info) string {
	src := strings.TrimRight(strings.ReplaceAll(i.SourceFolder, "\\", "/"), "/")
	base := src[strings.LastIndexByte(src, '/')+1:]
	if base == "" || base == "." || base == ".." || !filepath.IsLocal(base) || strings.ContainsAny(base, "/\\:") || layout.HasControl(base) {
		return "rewind-import-" + i.Checkpoint
	}
	return base
}
