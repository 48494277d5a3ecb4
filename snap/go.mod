module rewind.dev/snap

go 1.25.0

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/klauspost/compress v1.20.3
	github.com/klauspost/pgzip v1.3.0
	github.com/peterbourgon/ff/v3 v3.4.0
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.47.0
	golang.org/x/text v0.41.0
	rewind.dev/internal v0.0.0
)

require golang.org/x/tools v0.48.0 // indirect
