module rewind.dev/e2e

go 1.25
