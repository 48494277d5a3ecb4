package fakeapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// folderSaid matches the words in which each client tells the model its working folder, as
// seen in their requests (the folder is the first group that matched):
//
//	Claude Code   system prompt       "Primary working directory: /p"
//	Codex CLI     a user message      "<environment_context>\n  <cwd>/p</cwd>…", again when it changes
//	pi            system prompt       "Current working directory: /p"
//	Copilot CLI   system prompt       "* Current working directory: /p"
//	OpenCode      system prompt       "<env>\n  Working directory: /p"
//	Gemini CLI    first user message  "<session_context>…- **Workspace Directories:**\n  - /p"
var folderSaid = regexp.MustCompile(`(?:Primary working directory|Current working directory|Working directory): ([^\n<]+)` +
	`|<cwd>([^<\n]+)</cwd>` +
	`|\*\*Workspace Directories:\*\*\n +- ([^\n]+)`)

// Folder is the working folder the request tells the model it is in: where the client says so
// last (Codex repeats its <cwd> when the folder changes, and the model goes by the newest), in
// any of the clients' words above; "" when the request says nothing of it. A script that writes
// where Folder says works where the model was told to, as a real model does — so a client that
// still tells it an old folder shows up as a write landing there.
func (r *Request) Folder() string {
	folder := ""
	dec := json.NewDecoder(bytes.NewReader(r.Raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return folder
		}
		s, ok := tok.(string)
		if !ok {
			continue
		}
		for _, m := range folderSaid.FindAllStringSubmatch(s, -1) {
			for _, g := range m[1:] {
				if g != "" {
					folder = strings.TrimSpace(g)
				}
			}
		}
	}
}
