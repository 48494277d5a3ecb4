//go:build reliability && unix

package reliability

// The long part (scripts/reliability): at least 200 kills per command on a
// tree of a few thousand files and a transcript of some MB.
const (
	moveKills         = 60 // per direction and file-system case
	crashKills        = 200
	gcCheckpoints     = 1000
	gcKills           = 100
	crashFiles        = 2000
	crashTranscriptMB = 3
	concFiles         = 1500
	concRounds        = 12
	appendRounds      = 100
	stateRounds       = 25
	namesRounds       = 40
	inputRounds       = 60
	symmetryRounds    = 120
	sparseRounds      = 30
	changingSaves     = 300
	unreadableRounds  = 30
	ignoreRounds      = 60
	indexRounds       = 15
	interruptKills    = 20
	lockRounds        = 10
	long              = true
)
