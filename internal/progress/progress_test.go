package progress

import (
	"context"
	"testing"
)

// TestCounter: each unit finds its own counter in the context, the counts start again at
// Begin, Expect sets the totals over what is counted, and a nil counter counts nothing.
func TestCounter(t *testing.T) {
	var files, cps Counter
	ctx := With(With(context.Background(), Files, &files), Checkpoints, &cps)
	if From(ctx, Files) != &files || From(ctx, Checkpoints) != &cps {
		t.Fatal("a unit's counter is not the one put in the context")
	}
	if From(context.Background(), Files) != nil {
		t.Fatal("a context without a counter gives one")
	}
	c := From(ctx, Files)
	c.Add(5, 500)
	c.Begin()
	if c.Done.Load() != 0 || c.Bytes.Load() != 0 || c.Began.Load() == 0 {
		t.Fatalf("Begin left done %d, bytes %d, began %d", c.Done.Load(), c.Bytes.Load(), c.Began.Load())
	}
	c.Add(1, 10)
	c.Expect(3, 30)
	c.Add(2, 20)
	if c.Done.Load() != 3 || c.Total.Load() != 4 || c.Bytes.Load() != 30 || c.TotalBytes.Load() != 40 {
		t.Fatalf("done %d of %d, bytes %d of %d; want 3 of 4, 30 of 40", c.Done.Load(), c.Total.Load(), c.Bytes.Load(), c.TotalBytes.Load())
	}
	if cps.Done.Load() != 0 {
		t.Fatal("counting files counted checkpoints")
	}
	var none *Counter
	none.Begin()
	none.Expect(1, 1)
	none.Add(1, 1)
}
