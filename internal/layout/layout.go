// Package layout is where Rewind keeps its state on disk: its home folder
// (~/.rewind), a project's store (<project>/.agent/rewind/, or a folder of
// its own under the home in global mode, and how a project finds it), the names of the files and folders
// in a store, and the JSON of the files both the hooks (hookd) and the
// porcelain (rewind/store) read: config.json, session.json and
// hook-state.json. It is their one owner; it reads, and leaves writing to
// its callers (config files only through hookd's byte-preserving editor).
//
//	~/.rewind/                 Home
//	  config.json              Config (global)
//	  storage/<id>/            a store in global mode (GlobalStore)
//	  projects/<hash>          the id of a project path's global store (ProjectIndex)
//	  stores/<id>.json         the stores this user's Rewind made (Registry)
//	  logs/                    hook.log, notices
//	<project>/.agent/rewind/   a store in project mode (ProjectStore)
//	  store.json               the store's id
//	  config.json              Config (the project's overrides)
//	  session.json             Session
//	  hook-state.json          HookState
//	  restore-history.json, lock, verified, project (global mode),
//	  checkpoints/, layers/, staging/, transcript-backup/
//
// Everything in a store, and storage/ and logs/ in the home, is private to
// its user: files FileMode, folders DirMode.
package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/internal/gitdir"
)

// FileMode and DirMode are the modes of every file and folder Rewind writes
// in a store, in storage/ and logs/ of its home, and of what else it writes
// from a tree or a transcript (an export, a snapshot archive, a
// transcript's backup), whatever the umask. Those hold files and
// conversations that only their owner may read: nothing Rewind writes may
// widen who can read them, so none of it is readable by anyone else. (Set
// by a chmod, or by a creation mode the umask can only narrow.)
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// ProjectStore is where a project keeps its store in project mode,
// relative to the project.
const ProjectStore = ".agent/rewind"

// Mode is where a project's store lives.
type Mode string

const (
	ModeProject Mode = "project" // <project>/.agent/rewind/
	ModeGlobal  Mode = "global"  // ~/.rewind/storage/<id>/
)

// HomeName is the name of Rewind's own folder in the user's home.
const HomeName = ".rewind"

// Home is Rewind's own folder: $REWIND_HOME, else userHome/.rewind.
func Home(userHome string) string {
	if h := os.Getenv("REWIND_HOME"); h != "" {
		return h
	}
	return filepath.Join(userHome, HomeName)
}

// UserHome is Home for the current user (".rewind" when the user has no
// home folder).
func UserHome() string {
	h, _ := os.UserHomeDir()
	return Home(h)
}

// GlobalConfig is the global config.json in home (a Home).
func GlobalConfig(home string) string { return filepath.Join(home, ConfigFile) }

// Logs is the folder of the hooks' log and notices in home (a Home).
func Logs(home string) string { return filepath.Join(home, "logs") }

// Registry is the folder in home (a Home) that records the stores this user's Rewind made,
// a file <id>.json per store (the id in its StoreFile): a store whose id it does not hold came
// from elsewhere and is not trusted.
func Registry(home string) string { return filepath.Join(home, "stores") }

// GlobalStore is the folder of the global-mode store whose id is id (a name
// of StoreIDs' grammar): storage/<id> in home (a Home).
func GlobalStore(home, id string) string { return filepath.Join(home, "storage", id) }

// legacyGlobalStore is where stores in global mode were made before they had
// ids: a hash of the project's path. They are still found there.
func legacyGlobalStore(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	return GlobalStore(home, hex.EncodeToString(sum[:8]))
}

// ProjectIndex is the file in home (a Home) that names the global store of the
// project at path project: what finds a store again when its project folder
// was deleted and made again, or is not a repository.
func ProjectIndex(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(home, "projects", hex.EncodeToString(sum[:16]))
}

// GitMark is the file in a repository's git directory (a linked worktree's
// own) that names its global store: it moves with the repository, and a clone
// has none, so a moved project finds its store and two clones never share one.
const GitMark = "rewind-store"

// FindStore is the store of exactly project (an absolute path), if it has
// one: the project-mode folder first; else the global store its repository's
// mark names (GitMark); else the one the project index names for its path;
// else one made before stores had ids, under a hash of its path.
func FindStore(home, project string) (dir string, mode Mode, ok bool) {
	local := filepath.Join(project, ProjectStore)
	if isDir(local) {
		return local, ModeProject, true
	}
	if gd := gitdir.Of(project); gd != "" {
		if id := ReadStoreID(filepath.Join(gd, GitMark)); id != "" && isDir(GlobalStore(home, id)) {
			return GlobalStore(home, id), ModeGlobal, true
		}
	}
	if id := ReadStoreID(ProjectIndex(home, project)); id != "" && isDir(GlobalStore(home, id)) {
		return GlobalStore(home, id), ModeGlobal, true
	}
	if g := legacyGlobalStore(home, project); isDir(g) {
		return g, ModeGlobal, true
	}
	return "", "", false
}

// ReadStoreID reads a file that names a store by its id (a GitMark, a
// ProjectIndex entry): "" when it is missing, too long or not an id.
func ReadStoreID(name string) string {
	b, err := os.ReadFile(name)
	if err != nil || len(b) > 128 {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if !ValidStoreID(id) {
		return ""
	}
	return id
}

// ValidStoreID reports whether id may name a global store's folder: the
// grammar of a session id (letters, digits, '-', '_'), which a UUID and the
// hex of a path's hash both have.
func ValidStoreID(id string) bool { return ValidSessionID(id) }

// StoreRoot is the project dir (absolute) belongs to: the nearest folder,
// dir or above, that has a store. ok is false when none has.
func StoreRoot(home, dir string) (project string, ok bool) {
	for d := dir; ; {
		if _, _, ok := FindStore(home, d); ok {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// The files and folders of a store.
const (
	StoreFile      = "store.json"           // the store's id, which Registry records
	ConfigFile     = "config.json"          // Config: the project's overrides
	SessionFile    = "session.json"         // Session
	HookStateFile  = "hook-state.json"      // HookState
	HistoryFile    = "restore-history.json" // the restores, for undo-restore and redo
	LockFile       = "lock"                 // flock'ed by every writer; never renamed or deleted
	VerifiedFile   = "verified"             // what reading each file whole found
	ProjectFile    = "project"              // global mode: the project's path
	CheckpointsDir = "checkpoints"          // checkpoints/<id>/
	LayersDir      = "layers"               // layers/<id>.tar.gz, the archives
	StagingDir     = "staging"              // what a save writes before it commits
	BackupDir      = "transcript-backup"    // transcripts and forks set aside, never deleted
	SnapshotFile   = "snapshot.tar.gz"      // in a checkpoint: a hard link to its layer
	ManifestFile   = "manifest"             // in a checkpoint
	TranscriptFile = "transcript.jsonl.gz"  // in a checkpoint: the transcript's new bytes
	MetadataFile   = "metadata.json"        // in a checkpoint, written last
)
