module rewind.dev/rewind

go 1.25.0

require (
	github.com/aymanbagabas/go-udiff v0.4.1
	github.com/google/uuid v1.6.0
	github.com/klauspost/pgzip v1.3.0
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.47.0
	rewind.dev/fork v0.0.0
	rewind.dev/hookd v0.0.0
	rewind.dev/internal v0.0.0
	rewind.dev/jsonl v0.0.0
	rewind.dev/snap v0.0.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/hanwen/go-fuse/v2 v2.12.1 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/peterbourgon/ff/v3 v3.4.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/tools v0.48.0 // indirect
)

replace (
	rewind.dev/fork => ../fork
	rewind.dev/hookd => ../hookd
	rewind.dev/internal => ../internal
	rewind.dev/jsonl => ../jsonl
	rewind.dev/snap => ../snap
)
