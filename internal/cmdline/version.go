package cmdline

import "runtime/debug"

// Version is set at build time, once for every tool:
// -ldflags "-X rewind.dev/internal/cmdline.Version=…" (install.sh passes git describe).
var Version string

// VersionString is Version; else the build's VCS revision (12 digits, "-dirty" when the tree
// had changes), as go build records it in a git work tree; else the module's version, as go
// install records it; else "dev".
func VersionString() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		return rev
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}
