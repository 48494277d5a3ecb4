package cli

import "rewind.dev/rewind/store"

// checkpointObject is a checkpoint as every --json prints it (list, show,
// save, log): its metadata whole, as metadata.json holds it, and, until the
// next release, hasTranscript: has_transcript under the name it had before
// every key was snake_case (see JSON OUTPUT in rewind(1)).
type checkpointObject struct {
	*store.Metadata
	OldHasTranscript bool `json:"hasTranscript"`
}

func newCheckpointObject(md *store.Metadata) checkpointObject {
	return checkpointObject{Metadata: md, OldHasTranscript: md.HasTranscript}
}
