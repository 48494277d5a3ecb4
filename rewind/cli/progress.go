package cli

import (
	"context"
	"fmt"
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
// goes: after a second, one line redrawn in place ("rewind: saving: 1234
// files, 56.7 MiB, 12.3 MiB/s"; where the work knows its size, "rewind:
// restoring: 1234 of 5000 files, 56.7 of 230.0 MiB (25%), 12.3 MiB/s, 14s
// left"; for gc and validate "rewind: checking every checkpoint: 1234 of
// 10000 checkpoints"), cleared when stop is called. The counts are what snap
// and the store report through the returned context. Without a terminal it
// shows nothing. Numbers are written as the rest of Rewind's output writes
// them, without thousands separators (as git and restic print counts).
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
		draw := func() {
			took := time.Since(start)
			if began := p.Began.Load(); began > 0 {
				took = time.Since(time.Unix(0, began))
			}
			line := progressLine(msg, counts{p.Done.Load(), p.Bytes.Load(), p.Total.Load(), p.TotalBytes.Load()}, took)
			if total := sp.Total.Load(); total > 0 {
				line = countLine(msg, sp.Done.Load(), total)
			}
			fmt.Fprintf(e.stderr, "\r\x1b[K%s", line)
		}
		for {
			draw()
			select {
			case <-done:
				// The line's last state is the work's end (its total
				// reached), not a tick before it, then it is cleared.
				draw()
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

// counts are a progress line's figures: files and bytes done, and their
// totals when the work knows them (else 0).
type counts struct {
	files, bytes, totalFiles, totalBytes int64
}

// progressLine is the progress line, without its carriage return: took is
// how long the work counted has run.
func progressLine(msg string, c counts, took time.Duration) string {
	if c.files == 0 && c.bytes == 0 && c.totalFiles == 0 {
		return fmt.Sprintf("%s: %s…", name, msg)
	}
	mib := float64(c.bytes) / (1 << 20)
	rate := 0.0
	if s := took.Seconds(); s > 0 {
		rate = mib / s
	}
	if c.totalFiles <= 0 {
		return fmt.Sprintf("%s: %s: %d file%s, %.1f MiB, %.1f MiB/s", name, msg, c.files, plural(int(c.files)), mib, rate)
	}
	// The share done is of the bytes, which the time goes by (of the files
	// when they are all empty).
	done := float64(c.files) / float64(c.totalFiles)
	if c.totalBytes > 0 {
		done = float64(c.bytes) / float64(c.totalBytes)
	}
	done = min(done, 1)
	line := fmt.Sprintf("%s: %s: %d of %d file%s, %.1f of %.1f MiB (%d%%), %.1f MiB/s", name, msg, min(c.files, c.totalFiles), c.totalFiles,
		plural(int(c.totalFiles)), mib, float64(c.totalBytes)/(1<<20), int(done*100), rate)
	if left, ok := timeLeft(done, took); ok {
		line += ", " + left + " left"
	}
	return line
}

// timeLeft is how long the work, done's share of it done in took, will
// take yet at the pace it went: once a second has gone and a hundredth is
// done, so the first guess is not wild.
func timeLeft(done float64, took time.Duration) (string, bool) {
	if done < 0.01 || took < time.Second {
		return "", false
	}
	left := time.Duration(float64(took) * (1 - done) / done).Round(time.Second)
	switch {
	case left >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(left.Hours()), int(left.Minutes())%60), true
	case left >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(left.Minutes()), int(left.Seconds())%60), true
	}
	return fmt.Sprintf("%ds", int(left.Seconds())), true
}

// countLine is the progress line of work counted in checkpoints.
func countLine(msg string, done, total int64) string {
	return fmt.Sprintf("%s: %s: %d of %d checkpoint%s", name, msg, done, total, plural(int(total)))
}
