module rewind.dev/fork

go 1.25
