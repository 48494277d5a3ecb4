module rewind.dev/hookd

go 1.25.0
