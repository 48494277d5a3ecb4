package record

import "testing"

func TestCompareIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"20261122_143052_001", "20261122_143052_002", -1},
		{"20261122_143052_999", "20261122_143052_1000", -1},
		{"20261122_143052_1000", "20261122_143053_001", -1},
		{"20261122_143052_0999", "20261122_143052_999", -1}, // (the same count: by their text)
		{"20261122_143052_010", "20261122_143052_010", 0},
		{"", "20261122_143052_001", -1},
		{"20261123_000000_001", "20261122_235959_1000", 1},
	} {
		if got := CompareIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareIDs(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareIDs(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareIDs(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestIsID(t *testing.T) {
	for name, want := range map[string]bool{
		"20261122_143052_001": true, "20261122_143052_1000": true, "20261122_143052_01": false,
		"20261322_143052_001": false, "20261122-143052_001": false, "": false, "2026112a_143052_001": false,
	} {
		if got := IsID(name); got != want {
			t.Errorf("IsID(%q) = %v, want %v", name, got, want)
		}
	}
}
