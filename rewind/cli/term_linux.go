package cli

import "golang.org/x/sys/unix"

const ioctlReadTermios = unix.TCGETS
