module rewind.dev/jsonl

go 1.25
