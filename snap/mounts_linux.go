package snap

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// systemMounts lists the mounts below the folder real (a path with its
// symlinks resolved) as Linux tells them (/proc/self/mountinfo), each the
// mount seen there now: statx names the mount a path lies on, so one
// stacked under another at the same path, or hidden by a mount over a
// folder above it, is left out (on a kernel too old to name it, before
// 5.8, every one listed is kept). Read-only is the mount's own flag (a
// bind mount made read-only) or its file system's.
func systemMounts(real string) []mount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []mount
	for line := range strings.Lines(string(b)) {
		// id parent major:minor root point options [optional…] - type source super-options
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 6 || sep < 6 || sep+3 >= len(f) {
			continue
		}
		rel, ok := relUnder(real, unescapeMountPath(f[4]))
		if !ok {
			continue
		}
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, filepath.Join(real, rel), unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &st)
		if err != nil || st.Mask&unix.STATX_MNT_ID != 0 && strconv.FormatUint(st.Mnt_id, 10) != f[0] {
			continue
		}
		ro := slices.Contains(strings.Split(f[5], ","), "ro") || slices.Contains(strings.Split(f[sep+3], ","), "ro")
		out = append(out, mount{path: filepath.ToSlash(rel), readOnly: ro})
	}
	return out
}

// unescapeMountPath undoes mountinfo's escapes: a space, tab, newline or
// backslash in a path is written as \ and three octal digits.
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
