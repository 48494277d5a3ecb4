//go:build race

package jsonl

// hugeLine is the long line's size in TestHundredMegabyteLine. The race detector makes every
// byte access slow, so under -race the test uses 24 MB; a plain go test runs the full 100 MB.
const hugeLine = 24 << 20
