module rewind.dev/reliability

go 1.25.0
