// Command release writes a Rewind release into a folder (dist/ by default):
//
//   - rewind_<version>_<os>_<arch>.tar.gz (.zip for Windows) per platform, each holding the five
//     binaries, install.sh, the man pages, shell completions where `rewind completion` exists,
//     README.md and LICENSE, under one folder of the archive's name;
//   - checksums.txt, the archives' SHA-256 sums as sha256sum -c reads them;
//   - rewind.rb, a Homebrew formula that downloads the archives from -base-url;
//   - goproxy/, a module proxy folder (GOPROXY=file://…/goproxy): every released Rewind module at
//     the version, its go.mod requiring its siblings at that version, and every third-party
//     module their builds need, so go install works from it with nothing else.
//
// The binaries are built from the released module zips themselves, through goproxy/, one module
// at a time, as go install builds them: same sources, same dependency versions. Everything is
// reproducible: -trimpath, no build id, entries sorted, times set to SOURCE_DATE_EPOCH (else the
// release commit's time).
//
// Usage:
//
//	go run ./release (-version 0.4.0 | -snapshot) [-out dist] [-base-url URL] [-homepage URL]
//	                 [-platforms linux/amd64,…]
//
// scripts/release runs it, and checks what it made; docs/releasing.md says how and why.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &Config{Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "release: error: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := c.Exec(ctx); err != nil {
		fmt.Fprintf(stderr, "release: error: %v\n", err)
		var u usageError
		if errors.As(err, &u) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is an argument that cannot be right whatever the tree holds.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// DefaultBaseURL is where the formula says the archives are until the project says where it is
// hosted: "{version}" stands for the version (without "v").
const DefaultBaseURL = "https://example.invalid/rewind/releases/download/v{version}/"

// DefaultHomepage likewise stands for the project's page.
const DefaultHomepage = "https://example.invalid/rewind"

// Config is one release.
type Config struct {
	Root      string // the repository, where go.work is; default: the git top level of "."
	Version   string // "0.4.0" (a leading "v" is dropped); or Snapshot
	Snapshot  bool   // a version made of the commit's time and hash; the tree may have changes
	Out       string // the folder to write; replaced whole, never left half written
	BaseURL   string // the folder URL the archives are downloaded from ("{version}" replaced)
	Homepage  string
	Platforms string // comma-separated GOOS/GOARCH
	// Stdout gets one JSON object saying what was released (version, commit, archives);
	// Stderr the progress. Either may be nil.
	Stdout, Stderr io.Writer
}

// DefaultPlatforms are the platforms a release is built for.
const DefaultPlatforms = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64"

// RegisterFlags registers the release's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Root, "C", "", "the repository (where go.work is); default: the git top level of the current folder")
	fs.StringVar(&c.Version, "version", "", "the version to release, e.g. 0.4.0")
	fs.BoolVar(&c.Snapshot, "snapshot", false, "release a snapshot: version 0.0.0-<commit time>-<commit>, changes in the tree allowed")
	fs.StringVar(&c.Out, "out", "dist", "the folder to write (replaced whole)")
	fs.StringVar(&c.BaseURL, "base-url", DefaultBaseURL, "the URL of the folder the archives are downloaded from, for the Homebrew formula ({version} is replaced)")
	fs.StringVar(&c.Homepage, "homepage", DefaultHomepage, "the project's page, for the Homebrew formula")
	fs.StringVar(&c.Platforms, "platforms", DefaultPlatforms, "comma-separated GOOS/GOARCH to build for")
}

// Platform is one GOOS/GOARCH a release is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Exe is the file name of binary name on p.
func (p Platform) Exe(name string) string {
	if p.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// parsePlatforms parses "linux/amd64,darwin/arm64".
func parsePlatforms(s string) ([]Platform, error) {
	var ps []Platform
	seen := map[Platform]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		os, arch, ok := strings.Cut(f, "/")
		if !ok || os == "" || arch == "" || strings.ContainsAny(arch, "/ ") {
			return nil, usageError{fmt.Sprintf("platform %q is not GOOS/GOARCH", f)}
		}
		p := Platform{os, arch}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	return ps, nil
}
