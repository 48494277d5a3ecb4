module rewind.dev/release

go 1.25.0

require golang.org/x/mod v0.34.0
