package main

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

// formula is a Homebrew formula for the archives of the macOS and Linux platforms released,
// downloaded from the base URL. Homebrew unpacks an archive and enters its one folder, so the
// paths are those inside it.
var formula = template.Must(template.New("rewind.rb").Parse(`# Rewind {{.Version}}: written by scripts/release from the release's archives; not edited by hand.
class Rewind < Formula
  desc "Checkpoint and rewind an AI coding agent's code and conversation together"
  homepage "{{.Homepage}}"
  version "{{.Version}}"
  license "Apache-2.0"
{{range .OSes}}
  on_{{.Name}} do
{{- range .Archs}}
    on_{{.Name}} do
      url "{{.URL}}"
      sha256 "{{.SHA256}}"
    end
{{- end}}
  end
{{end}}
  def install
    bin.install {{range $i, $b := .Binaries}}{{if $i}}, {{end}}"{{$b}}"{{end}}
    man1.install Dir["man/*.1"]
{{- if .Completions}}
    bash_completion.install "completions/rewind.bash" => "rewind"
    zsh_completion.install "completions/_rewind"
    fish_completion.install "completions/rewind.fish"
    # bash-completion and fish load a command's file by its name: the other tools' names are
    # links to rewind's, which completes all five (as install.sh does).
    %w[{{range $i, $b := .Plumbing}}{{if $i}} {{end}}{{$b}}{{end}}].each do |name|
      bash_completion.install_symlink bash_completion/"rewind" => name
      fish_completion.install_symlink fish_completion/"rewind.fish" => "#{name}.fish"
    end
{{- end}}
  end

  def caveats
    <<~EOS
      To take checkpoints at every prompt, register Rewind's hooks with your agents:
        rewind config --register-hooks
      Then, in a project: rewind init
      The hooks name rewind-hook by its path in this version's keg: after brew upgrade rewind,
      run rewind config --register-hooks again.
    EOS
  end

  test do
    assert_match "rewind #{version} (", shell_output("#{bin}/rewind --version")
    system bin/"rewind-hook", "--version"
  end
end
`))

type formulaArch struct{ Name, URL, SHA256 string }

type formulaOS struct {
	Name  string
	Archs []formulaArch
}

// writeFormula writes dir/rewind.rb for the archives in dir.
func (r *release) writeFormula(dir string, archives []string, completions map[string][]byte) error {
	data := struct {
		Version, Homepage  string
		OSes               []formulaOS
		Binaries, Plumbing []string
		Completions        bool
	}{Version: r.version, Homepage: r.homepage, Binaries: r.binaries(), Completions: len(completions) > 0}
	for _, b := range data.Binaries {
		if b != "rewind" {
			data.Plumbing = append(data.Plumbing, b)
		}
	}
	// Homebrew's names: on_macos/on_linux, on_arm/on_intel.
	for _, o := range []struct{ goos, brew string }{{"darwin", "macos"}, {"linux", "linux"}} {
		fo := formulaOS{Name: o.brew}
		for _, a := range []struct{ goarch, brew string }{{"arm64", "arm"}, {"amd64", "intel"}} {
			p := Platform{o.goos, a.goarch}
			name := r.archiveName(p) + archiveExt(p)
			if !contains(archives, name) {
				continue
			}
			sum, err := fileSHA256(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			fo.Archs = append(fo.Archs, formulaArch{Name: a.brew, URL: r.baseURL + name, SHA256: sum})
		}
		if len(fo.Archs) > 0 {
			data.OSes = append(data.OSes, fo)
		}
	}
	var b bytes.Buffer
	if err := formula.Execute(&b, data); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "rewind.rb"), b.Bytes(), 0o644)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
