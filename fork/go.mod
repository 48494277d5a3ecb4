module rewind.dev/fork

go 1.25.0

require (
	github.com/google/uuid v1.6.0
	github.com/klauspost/pgzip v1.3.0
	github.com/peterbourgon/ff/v3 v3.4.0
	github.com/rogpeppe/go-internal v1.16.0
	rewind.dev/internal v0.0.0
	rewind.dev/jsonl v0.0.0
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
