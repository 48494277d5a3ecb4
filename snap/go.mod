module rewind.dev/snap

go 1.25

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/klauspost/pgzip v1.3.0 // indirect
	github.com/peterbourgon/ff/v3 v3.4.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
)
