package cli

import "testing"

func TestGraphLines(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{nodeLine(1, 0), "*"},
		{nodeLine(3, 1), "| * |"},
		{joinLine(2, 0, 1), "|/"},
		{joinLine(3, 0, 1), "|/ /"},
		{joinLine(3, 0, 2), "|_|/"},
		{joinLine(4, 1, 3), "| |_|/"},
		{shiftLine(3, 1), "|  /"},
		{shiftLine(2, 0), " /"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
