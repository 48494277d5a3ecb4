package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Gemini CLI (0.61) keeps a project's chats in ~/.gemini/tmp/<slug>/chats/, where <slug> is
// the project's entry in ~/.gemini/projects.json. Each slug folder, under tmp/ and under
// history/, holds a .project_root file naming its project. A project the registry does not
// name takes the slug of a folder whose .project_root names it (Gemini then registers it
// itself), else claims a new one from the folder's base name. Rewind never writes the
// registry: it finds the slug as Gemini would, and when there is none claims one the way
// Gemini does, by its .project_root files, which Gemini adopts at its next start.

const geminiProjectRoot = ".project_root"

// geminiProject is the slug of project dir in the Gemini folder home, claimed when it has none.
func geminiProject(home, dir string) (string, error) {
	bases := []string{filepath.Join(home, "tmp"), filepath.Join(home, "history")}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if b, err := os.ReadFile(filepath.Join(home, "projects.json")); err == nil {
		_ = json.Unmarshal(b, &reg) // a registry Gemini cannot read, it resets: as if empty
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if slug := reg.Projects[dir]; slug != "" && geminiOwns(bases, slug, dir, true) {
		return slug, nil
	}
	for _, base := range bases {
		names, err := os.ReadDir(base)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		for _, n := range names {
			if n.IsDir() && geminiOwns([]string{base}, n.Name(), dir, false) {
				return n.Name(), geminiClaim(bases, n.Name(), dir)
			}
		}
	}
	taken := map[string]bool{}
	for _, slug := range reg.Projects {
		taken[slug] = true
	}
	slug := geminiSlug(filepath.Base(dir))
	for i := 0; ; i++ {
		cand := slug
		if i > 0 {
			cand += "-" + strconv.Itoa(i)
		}
		if taken[cand] || !geminiOwns(bases, cand, dir, true) {
			continue
		}
		if err := geminiClaim(bases, cand, dir); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return "", err
		}
		return cand, nil
	}
}

// geminiOwns reports whether the .project_root files of slug name dir; a missing one counts
// as dir's when unclaimed is true.
func geminiOwns(bases []string, slug, dir string, unclaimed bool) bool {
	found := false
	for _, base := range bases {
		b, err := os.ReadFile(filepath.Join(base, slug, geminiProjectRoot))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || strings.TrimSpace(string(b)) != dir {
			return false
		}
		found = true
	}
	return found || unclaimed
}

// geminiClaim writes slug's .project_root files naming dir where they are missing, as Gemini
// does (the path, no newline); fs.ErrExist when another project holds one.
func geminiClaim(bases []string, slug, dir string) error {
	for _, base := range bases {
		folder := filepath.Join(base, slug)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(folder, geminiProjectRoot), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			if geminiOwns([]string{base}, slug, dir, false) {
				continue
			}
			return err
		}
		if err != nil {
			return err
		}
		_, err = f.WriteString(dir)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var geminiNonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// geminiSlug is Gemini's slug of a folder's base name: lower case, every run of other
// characters than a-z and 0-9 as one '-', none at the ends, "project" when nothing is left.
func geminiSlug(name string) string {
	s := strings.Trim(geminiNonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		return "project"
	}
	return s
}
