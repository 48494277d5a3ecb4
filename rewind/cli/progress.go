package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

// How the progress line is paced: it appears once the work has taken
// progressAfter, and is redrawn every progressEvery.
const (
	progressAfter = time.Second
	progressEvery = 250 * time.Millisecond
)

// progress shows on stderr, when it is a terminal, how the work called msg
// goes: after a second, one line redrawn in place ("rewind: saving: 1,234
// files, 56.7 MiB, 12.3 MiB/s", or for gc and validate "rewind: checking
// every checkpoint: 1,234 of 10,000 checkpoints"), cleared when stop is
// called. The counts are what snap and the store report through the
// returned context. Without a terminal it shows nothing.
func (e *env) progress(ctx context.Context, msg string) (context.Context, func()) {
	if !isTerminal(e.stderr) {
		return ctx, func() {}
	}
	var p snap.Progress
	var sp store.Progress
	ctx = store.WithProgress(snap.WithProgress(ctx, &p), &sp)
	after, every := e.progressAfter, e.progressEvery
	if after == 0 {
		after = progressAfter
	}
	if every == 0 {
		every = progressEvery
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if after > 0 { // (< 0: at once, which tests ask for so the line is drawn however fast the work)
			select {
			case <-done:
				return
			case <-time.After(after):
			}
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			line := progressLine(msg, p.Files.Load(), p.Bytes.Load(), time.Since(start))
			if total := sp.Total.Load(); total > 0 {
				line = countLine(msg, sp.Done.Load(), total)
			}
			fmt.Fprintf(e.stderr, "\r\x1b[K%s", line)
			select {
			case <-done:
				fmt.Fprint(e.stderr, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return ctx, func() {
		close(done)
		wg.Wait()
	}
}

// progressLine is the progress line, without its carriage return.
func progressLine(msg string, files, bytes int64, took time.Duration) string {
	if files == 0 && bytes == 0 {
		return fmt.Sprintf("%s: %s…", name, msg)
	}
	mib := float64(bytes) / (1 << 20)
	rate := 0.0
	if s := took.Seconds(); s > 0 {
		rate = mib / s
	}
	return fmt.Sprintf("%s: %s: %s file%s, %.1f MiB, %.1f MiB/s", name, msg, thousands(files), plural(int(files)), mib, rate)
}

// countLine is the progress line of work counted in checkpoints.
func countLine(msg string, done, total int64) string {
	return fmt.Sprintf("%s: %s: %s of %s checkpoint%s", name, msg, thousands(done), thousands(total), plural(int(total)))
}

// thousands writes n with commas: 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
