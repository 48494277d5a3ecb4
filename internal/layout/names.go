package layout

// ValidSessionID reports whether id has the shape of an agent's session id, the only shape
// Rewind lets name a file or folder: 1 to 128 ASCII letters, digits, '-' and '_', starting
// with a letter or digit. Every agent's ids have it (UUIDs; OpenCode's ses_…); a session id
// read from a hook payload, a store file or a bundle that does not is refused, so that none
// can lead a path out of its folder ("../../.ssh").
func ValidSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// HasControl reports whether s holds a C0 or C1 control character, which no name Rewind takes
// from data (a path, an id, a folder) may: printed, one could rewrite the terminal.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return true
		}
	}
	return false
}
