package cmdline

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version, Commit and Date are set at build time, once for every tool, with
// -ldflags "-X rewind.dev/internal/cmdline.Version=0.4.0 -X …Commit=<hash> -X …Date=2026-11-28".
// scripts/release sets all three (Version without the leading "v"); install.sh, building from a
// clone, sets Commit ("-dirty" appended when the tree had changes) and Date only, so that such a
// build calls itself dev-<commit>. Unset, they come from the build's own record (ReadBuild).
var (
	Version string
	Commit  string
	Date    string
)

// Build is what a binary knows of how it was made: what --version prints.
type Build struct {
	// Version is a release's version ("0.4.0"), the module version go install fetched
	// ("0.4.0" for rewind.dev/rewind/cmd/rewind@v0.4.0), "dev-<commit>" for a build from a
	// clone, else "dev".
	Version string
	// Commit is the commit built, 12 hex digits ("-dirty" appended when the tree had changes);
	// "" when unknown, as for go install, which builds from a module zip.
	Commit string
	// Date is the commit's date, YYYY-MM-DD; "" when unknown.
	Date string
	// Go is the toolchain that built the binary (go1.26.8); Platform its GOOS/GOARCH.
	Go, Platform string
}

// ReadBuild returns the binary's Build: the values set at build time where they are set, else
// what the go command recorded (the VCS revision and time of a build in a git work tree, the
// module version of go install pkg@version).
func ReadBuild() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	return buildOf(bi, Version, Commit, Date)
}

func buildOf(bi *debug.BuildInfo, version, commit, date string) Build {
	b := Build{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var rev, vtime string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			vtime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit == "" && rev != "" {
		commit = rev
		if dirty {
			commit += "-dirty"
		}
	}
	b.Commit = shortCommit(commit)
	if date == "" && len(vtime) >= len("2006-01-02") {
		date = vtime[:len("2006-01-02")]
	}
	b.Date = date
	switch {
	case version != "":
		b.Version = strings.TrimPrefix(version, "v")
	case b.Commit != "":
		// A build from a clone: go build in a work tree, or install.sh.
		b.Version = "dev-" + b.Commit
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		b.Version = strings.TrimPrefix(bi.Main.Version, "v")
	default:
		b.Version = "dev"
	}
	return b
}

// shortCommit is a commit hash cut to 12 hex digits, keeping a "-dirty" suffix.
func shortCommit(c string) string {
	hash, dirty := strings.CutSuffix(c, "-dirty")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if dirty {
		hash += "-dirty"
	}
	return hash
}

// String is the version and, in parentheses, what else is known, as restic prints it:
// "0.4.0 (commit 1a2b3c4d5e6f, 2026-11-28, go1.26.8, linux/amd64)".
func (b Build) String() string {
	var details []string
	if b.Commit != "" {
		details = append(details, "commit "+b.Commit)
	}
	if b.Date != "" {
		details = append(details, b.Date)
	}
	details = append(details, b.Go, b.Platform)
	return b.Version + " (" + strings.Join(details, ", ") + ")"
}

// VersionString is ReadBuild().Version: the one version string that status and export bundles
// record.
func VersionString() string {
	return ReadBuild().Version
}
