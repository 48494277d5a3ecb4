//go:build !linux

package snap

import "os"

const canWillNeed = false

func willNeed(*os.File) {}
