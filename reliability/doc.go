// Package reliability is Rewind's reliability suite: it runs the real
// binaries (rewind, rewind-hook, rewind-fork, rewind-snap, rewind-jsonl)
// under SIGKILL at random instants, under concurrency, on full and
// read-only disks, and against hostile input, and checks after every run
// that nothing the user had is lost and that the store still validates.
//
// The fast part runs in scripts/test (go test work). The long part —
// hundreds of kills per command, tmpfs mounts, crafted corpora with memory
// bounds — runs with the reliability build tag from scripts/reliability:
//
//	go test -tags reliability -count=1 -v -timeout 30m ./reliability/
//
// The suite is Unix-only (its files say so in their build lines): it sends
// SIGSTOP and SIGKILL, mounts file systems and runs as other users. On other
// systems the package builds and holds no tests.
//
// Every test prints its figures (runs, faults injected, failures) on lines
// starting "reliability:" for the README table.
package reliability
