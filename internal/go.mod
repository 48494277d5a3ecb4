module rewind.dev/internal

go 1.25.0

require github.com/peterbourgon/ff/v3 v3.4.0

require golang.org/x/sys v0.44.0
