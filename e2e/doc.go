// Package e2e holds Rewind's end-to-end tests against the real agent CLIs. They run only with
// the build tag e2e (scripts/e2e installs the pinned clients, builds the rewind binaries and
// runs them), so `go test work` skips them.
//
// Environment of the tests:
//
//	REWIND_E2E_CLAUDE  path of the `claude` executable (Claude Code)
//	REWIND_E2E_DROID   path of the `droid` executable (Factory Droid)
//	REWIND_E2E_BIN     directory holding the built rewind binaries (rewind-jsonl, rewind-fork)
//	REWIND_E2E_TMUX    tmux executable (default: tmux on PATH)
//
// Each test gets its own temporary HOME and project directory, and a fake Anthropic Messages
// API (package fakeapi) on 127.0.0.1 whose replies the test scripts.
package e2e
