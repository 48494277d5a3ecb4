module rewind.dev/internal

go 1.25.0
