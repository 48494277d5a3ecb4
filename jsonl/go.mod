module rewind.dev/jsonl

go 1.25.0

require (
	github.com/peterbourgon/ff/v3 v3.4.0
	rewind.dev/internal v0.0.0
)

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
