package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// wsModule is one module of go.work.
type wsModule struct {
	Path     string   // rewind.dev/snap
	Dir      string   // its folder, absolute
	Rel      string   // its folder relative to the repository, slash-separated ("snap")
	GoMod    []byte   // its go.mod as the tree has it
	Binaries []string // the commands it provides: cmd/rewind*/main.go ("rewind-snap")
	Requires []string // the workspace modules its go.mod requires, sorted
}

// workspace reads go.work in root and the go.mod of every module it uses.
func workspace(root string) ([]*wsModule, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []*wsModule
	byPath := map[string]*wsModule{}
	reqs := map[*wsModule][]string{}
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		f, err := modfile.ParseLax(filepath.Join(dir, "go.mod"), gomod, nil)
		if err != nil {
			return nil, err
		}
		if f.Module == nil {
			return nil, fmt.Errorf("%s/go.mod: no module line", u.Path)
		}
		m := &wsModule{Path: f.Module.Mod.Path, Dir: dir, Rel: path.Clean(filepath.ToSlash(u.Path)), GoMod: gomod}
		mains, err := filepath.Glob(filepath.Join(dir, "cmd", "rewind*", "main.go"))
		if err != nil {
			return nil, err
		}
		for _, main := range mains {
			m.Binaries = append(m.Binaries, filepath.Base(filepath.Dir(main)))
		}
		sort.Strings(m.Binaries)
		for _, r := range f.Require {
			reqs[m] = append(reqs[m], r.Mod.Path)
		}
		mods = append(mods, m)
		byPath[m.Path] = m
	}
	for _, m := range mods {
		for _, r := range reqs[m] {
			if byPath[r] != nil {
				m.Requires = append(m.Requires, r)
			}
		}
		sort.Strings(m.Requires)
	}
	return mods, nil
}

// released is the modules a release holds, each after the modules it requires: those that
// provide a binary, and every workspace module they require. The test harnesses (e2e,
// reliability) and this tool provide none and are required by none.
func released(mods []*wsModule) ([]*wsModule, error) {
	byPath := map[string]*wsModule{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	var order []*wsModule
	state := map[*wsModule]int{} // 1: being visited, 2: done
	var visit func(m *wsModule, from []string) error
	visit = func(m *wsModule, from []string) error {
		switch state[m] {
		case 1:
			return fmt.Errorf("modules require each other in a cycle: %s", strings.Join(append(from, m.Path), " → "))
		case 2:
			return nil
		}
		state[m] = 1
		for _, r := range m.Requires {
			if err := visit(byPath[r], append(from, m.Path)); err != nil {
				return err
			}
		}
		state[m] = 2
		order = append(order, m)
		return nil
	}
	sorted := slices.Clone(mods)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, m := range sorted {
		if len(m.Binaries) > 0 {
			if err := visit(m, nil); err != nil {
				return nil, err
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no module of go.work provides a cmd/rewind*/main.go")
	}
	return order, nil
}

// releasedGoMod is m's go.mod as released at version (canonical, "v0.4.0"): every requirement on
// a released module at that version. A go.mod with replace directives cannot be released: go
// install refuses a module whose go.mod has them.
func releasedGoMod(m *wsModule, version string, isReleased func(string) bool) ([]byte, error) {
	f, err := modfile.Parse(m.Rel+"/go.mod", m.GoMod, nil)
	if err != nil {
		return nil, err
	}
	if len(f.Replace) > 0 {
		return nil, fmt.Errorf("%s/go.mod has replace directives (%s => …): a released module's go.mod must have none; go.work's replace ties the folders",
			m.Rel, f.Replace[0].Old.Path)
	}
	var sib []string
	for _, r := range f.Require {
		if isReleased(r.Mod.Path) {
			sib = append(sib, r.Mod.Path)
		}
	}
	for _, p := range sib {
		if err := f.AddRequire(p, version); err != nil {
			return nil, err
		}
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

// modHashes are a released module's go.sum hashes.
type modHashes struct{ Zip, GoMod string }

// sumLines are the go.sum lines for module p at version.
func (h modHashes) sumLines(p, version string) string {
	return fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", p, version, h.Zip, p, version, h.GoMod)
}

// goModHash is the go.sum hash of a go.mod file, as the go command computes it.
func goModHash(gomod []byte) (string, error) {
	return dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
}

// stageModules writes every released module at version into the module proxy folder proxy:
// <path>/@v/list, <version>.info, .mod and .zip. Each zip holds the module's files as git sees
// them (tracked, and untracked but not ignored), the repository's LICENSE where the module has
// none (as a module proxy does for a module in a subfolder), its released go.mod, and its go.sum
// with the lines for the released modules it requires, so that a build of it verifies every
// module against go.sum. It returns the zips' paths.
func (r *release) stageModules(proxy string) (map[string]string, error) {
	isReleased := func(p string) bool {
		for _, m := range r.modules {
			if m.Path == p {
				return true
			}
		}
		return false
	}
	hashes := map[string]modHashes{}
	zips := map[string]string{}
	byPath := map[string]*wsModule{}
	for _, m := range r.modules {
		byPath[m.Path] = m
	}
	for _, m := range r.modules {
		mv := module.Version{Path: m.Path, Version: r.modVersion()}
		gomod, err := releasedGoMod(m, mv.Version, isReleased)
		if err != nil {
			return nil, err
		}
		gosum, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		// The go.sum lines of every released module m needs, however indirectly.
		for _, p := range closure(m, byPath) {
			gosum = append(gosum, hashes[p].sumLines(p, mv.Version)...)
		}
		files, err := r.moduleFiles(m, gomod, gosum)
		if err != nil {
			return nil, err
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(proxy, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		zipPath := filepath.Join(dir, mv.Version+".zip")
		if err := writeModuleZip(zipPath, mv, files); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Rel, err)
		}
		zh, err := dirhash.HashZip(zipPath, dirhash.DefaultHash)
		if err != nil {
			return nil, err
		}
		mh, err := goModHash(gomod)
		if err != nil {
			return nil, err
		}
		hashes[m.Path] = modHashes{Zip: zh, GoMod: mh}
		zips[m.Path] = zipPath
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{mv.Version, r.time.UTC()})
		if err != nil {
			return nil, err
		}
		for name, data := range map[string][]byte{
			"list":               []byte(mv.Version + "\n"),
			mv.Version + ".info": append(info, '\n'),
			mv.Version + ".mod":  gomod,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return zips, nil
}

// closure is every workspace module m requires, directly or not, sorted.
func closure(m *wsModule, byPath map[string]*wsModule) []string {
	seen := map[string]bool{}
	var walk func(*wsModule)
	walk = func(m *wsModule) {
		for _, p := range m.Requires {
			if !seen[p] {
				seen[p] = true
				walk(byPath[p])
			}
		}
	}
	walk(m)
	var ps []string
	for p := range seen {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// moduleFiles lists the files of m's zip, sorted: what git sees in its folder, with gomod and
// gosum in place of its go.mod and go.sum, and the repository's LICENSE where it has none.
func (r *release) moduleFiles(m *wsModule, gomod, gosum []byte) ([]modzip.File, error) {
	out, err := r.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", m.Rel)
	if err != nil {
		return nil, err
	}
	var files []modzip.File
	haveLicense := false
	for _, p := range strings.Split(out, "\x00") {
		name, ok := strings.CutPrefix(p, m.Rel+"/")
		if !ok || name == "go.mod" || name == "go.sum" {
			continue
		}
		src := filepath.Join(r.root, filepath.FromSlash(p))
		if _, err := os.Lstat(src); os.IsNotExist(err) {
			continue // deleted in the work tree (a snapshot of a tree with changes)
		}
		files = append(files, diskFile{name: name, src: src})
		haveLicense = haveLicense || name == "LICENSE"
	}
	files = append(files, dataFile{name: "go.mod", data: gomod})
	if len(gosum) > 0 {
		files = append(files, dataFile{name: "go.sum", data: gosum})
	}
	if !haveLicense {
		license, err := os.ReadFile(filepath.Join(r.root, "LICENSE"))
		if err != nil {
			return nil, fmt.Errorf("the repository's LICENSE, for the module zips: %w", err)
		}
		files = append(files, dataFile{name: "LICENSE", data: license})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path() < files[j].Path() })
	return files, nil
}

// writeModuleZip writes the zip of module mv, made of files, at path.
func writeModuleZip(path string, mv module.Version, files []modzip.File) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := modzip.Create(f, mv, files); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// diskFile is a file of a module zip read from the work tree.
type diskFile struct{ name, src string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.src) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.src) }

// dataFile is a file of a module zip made here (go.mod, go.sum, LICENSE).
type dataFile struct {
	name string
	data []byte
}

func (f dataFile) Path() string                 { return f.name }
func (f dataFile) Lstat() (os.FileInfo, error)  { return dataInfo{f}, nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo struct{ f dataFile }

func (i dataInfo) Name() string       { return path.Base(i.f.name) }
func (i dataInfo) Size() int64        { return int64(len(i.f.data)) }
func (i dataInfo) Mode() os.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
