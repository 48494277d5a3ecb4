package hookd

import "path/filepath"

// SetStatusLine sets Claude Code's statusLine in the settings file at
// settingsPath to run command, only when the file configures no statusLine
// yet (a user's own status line is never replaced). Same safety rules as
// Register.
func SetStatusLine(settingsPath, command string) (Change, error) {
	return updateSettings(settingsPath, "{}", false, func(src []byte) ([]byte, int, int, error) {
		root, err := parseObject(src, settingsPath)
		if err != nil {
			return nil, 0, 0, err
		}
		if root.member("statusLine") >= 0 {
			return src, 0, 0, nil
		}
		v := jv{key: "statusLine", isObj: true, obj: []jv{
			{key: "type", lit: jsonString("command")},
			{key: "command", lit: jsonString(command)},
		}}
		return insertElem(src, root, root, v), 1, 0, nil
	})
}

// UnsetStatusLine removes Claude Code's statusLine from the settings file
// when it runs `rewind statusline` (install.sh --statusline put it there).
func UnsetStatusLine(settingsPath string) (Change, error) {
	return updateSettings(settingsPath, "{}", true, func(src []byte) ([]byte, int, int, error) {
		root, err := parseObject(src, settingsPath)
		if err != nil {
			return nil, 0, 0, err
		}
		i := root.member("statusLine")
		if i < 0 || root.elems[i].val.kind != '{' {
			return src, 0, 0, nil
		}
		sl := root.elems[i].val
		ci := sl.member("command")
		if ci < 0 {
			return src, 0, 0, nil
		}
		cmd, _ := sl.elems[ci].val.stringValue(src)
		if w := shellWords(cmd); len(w) != 2 || filepath.Base(w[0]) != "rewind" || w[1] != "statusline" {
			return src, 0, 0, nil
		}
		return removeElem(src, root, i), 0, 1, nil
	})
}
