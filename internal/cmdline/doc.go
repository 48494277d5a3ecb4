// Package cmdline is what Rewind's five commands (rewind, rewind-snap, rewind-jsonl,
// rewind-fork, rewind-hook) share at their edge:
//
//   - Error, the one error that carries a hint and an exit status (WithHint, Usagef, Exit);
//   - Tool.Report, the one way from an error to stderr ("<tool>: error: …", "<tool>: hint: …",
//     or under rewind's --json one {"type":"error",…} object) and to the exit status;
//   - QuotePath and QuoteText, the one way a name or a text that came from data (a file name,
//     a prompt, a title) is shown to a person: control characters escaped, as git quotes
//     names; JSON prints them exactly;
//   - ReadBuild, the one version and what --version says with it: the values set with -ldflags
//     -X (Version, Commit, Date), else the VCS revision or the module version the go command
//     recorded, else "dev";
//   - Tool.Run, the one way an ffcli command tree is parsed and run, its usage printed once, on
//     stderr, when asked for (or when no command was given), and every flag error reported as
//     one error and one hint;
//   - Main, the signal-aware start every main shares.
//
// Libraries return typed errors that never name a flag or a command; each command's hint-of-error
// switch (Tool.Hint) turns them into hints naming its own flags, in one place.
package cmdline

// Exit statuses every tool shares; each documents its others in its man page.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)
