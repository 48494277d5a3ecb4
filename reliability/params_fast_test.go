//go:build !reliability && unix

package reliability

// The fast part (scripts/test): a few kills per command on a small tree.
const (
	moveKills         = 2 // per direction and file-system case
	crashKills        = 4
	gcCheckpoints     = 250
	gcKills           = 4
	crashFiles        = 600
	crashTranscriptMB = 1
	concFiles         = 300
	concRounds        = 2
	appendRounds      = 10
	stateRounds       = 2
	namesRounds       = 2
	inputRounds       = 6
	symmetryRounds    = 4
	sparseRounds      = 1
	changingSaves     = 20
	unreadableRounds  = 2
	ignoreRounds      = 3
	indexRounds       = 1
	interruptKills    = 3
	lockRounds        = 1
	long              = false
)
