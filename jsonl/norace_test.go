//go:build !race

package jsonl

// hugeLine is the long line's size in TestHundredMegabyteLine: 100 MB (24 MB under -race).
const hugeLine = 100 << 20
