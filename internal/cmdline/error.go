package cmdline

import (
	"errors"
	"fmt"
)

// Error is an error with a hint of what to do about it, and the exit status it ends the run
// with. Only commands make them: a library returns its own typed errors, and the command's
// hint-of-error switch says what to do about them.
type Error struct {
	Err  error
	Hint string // what to do, naming the command's own flags; "" for none
	Code int    // the exit status; 0 leaves it to the tool (ExitFailure unless it knows better)
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// WithHint attaches a hint to err (nil stays nil).
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Hint: hint}
}

// Usagef is a usage error (bad flags or arguments): exit status 2.
func Usagef(format string, a ...any) error {
	return &Error{Err: fmt.Errorf(format, a...), Code: ExitUsage}
}

// Exit ends the run with code and prints nothing: what stdout said is the answer (rewind-jsonl
// verify's exit 3).
func Exit(code int) error { return exitStatus(code) }

type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// FlagError is a command line the flag package refused (an unknown flag, a bad value): a usage
// error. Command is the command whose flags they were ("rewind-snap create").
type FlagError struct {
	Command string
	Err     error
}

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// HintOf is the hint err carries: the first Error's in its chain, else, for a FlagError, to read
// the command's help. A command's hint-of-error switch ends with it.
func HintOf(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if h, ok := e.(*Error); ok && h.Hint != "" {
			return h.Hint
		}
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		return fmt.Sprintf("run '%s --help'", fe.Command)
	}
	return ""
}

// CodeOf is the exit status err carries: the first Error's in its chain with one, ExitUsage for
// a FlagError, else 0.
func CodeOf(err error) int {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch e := e.(type) {
		case *Error:
			if e.Code != 0 {
				return e.Code
			}
		case exitStatus:
			return int(e)
		case *FlagError:
			return ExitUsage
		}
	}
	return 0
}
