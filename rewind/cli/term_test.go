package cli

import (
	"os"
	"testing"
)

// /dev/null is a character device but not a terminal: a restore run with
// </dev/null must not ask (and read "no").
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("isTerminal(/dev/null) = true")
	}
}
