module rewind.dev/jsonl

go 1.25

require github.com/peterbourgon/ff/v3 v3.4.0
