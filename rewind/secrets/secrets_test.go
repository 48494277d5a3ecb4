package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind.dev/internal/fixtures"
)

// Samples are written in pieces ("gh"+"p_…") so that this file holds no
// token a push-protection scanner would take for a live one.
var (
	ghToken    = "gh" + "p_" + "R2pYk8dQmZ4vL7nW1xC9bT6hF3sJ0aEuGiKo"
	awsKeyID   = "AK" + "IA" + "ZQ3WX7RT5YUPLM2B"
	awsSecret  = "wJa" + "lrXUtnFK7MDENGbPxRfiCYz9Q2vB8nL4kT6hS3dW"
	stripeKey  = "sk" + "_test_" + "4eC39HqLyjWDarjtT1zdp7dcTmPq9RvX"
	slackToken = "xo" + "xb-" + "781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD"
	jwtToken   = "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhIjoxLCJiIjoyLCJjIjozfQ.hxhGCCCmGV9nT1slief1WgEsOsfdnlVizNrODxfh1M8"
	rsaKey     = "-----BEGIN RSA " + "PRIVATE KEY-----\n" +
		"MIIEpQIBAAKCAQEAn6/O8li+SX4m98LLYt/PKSzEmQ++ZBD7Loh9P13f4yQ92EF3\n" +
		"yxR5MsXFu9PRsrYQA7/4UTPHiC4y2sAVCBg4C2yyBpUEtMQjyCESi6Y=\n" +
		"-----END RSA PRIVATE KEY-----"
)

// Some of the examples gitleaks checks its own rules by (the true and false
// positives of cmd/generate/config/rules/*.go): each true one is found by
// its rule, with the secret it names; no false one is found by its rule.
func TestGitleaksExamples(t *testing.T) {
	for _, tt := range []struct {
		rule, path, text string
		secret           string // "": the rule finds nothing
	}{
		// aws.go
		{"aws-access-token", "", `AWSToken := "` + awsKeyID + `"`, awsKeyID},
		{"aws-access-token", "", "AWS_TOKEN = \"AKIALALEMEL33243OLIB\"", "AKIALALEMEL33243OLIB"},
		{"aws-access-token", "", `key = AKIAXXXXXXXXXXXXXXXX`, ""},           // low entropy
		{"aws-access-token", "", `aws_access_key: AKIAIOSFODNN7EXAMPLE`, ""}, // placeholder
		{"aws-access-token", "", `TODAYINASIAASACKOFRICEFELLOVER`, ""},       // wrong length
		// github.go
		{"github-pat", "", `githubToken := "` + ghToken + `"`, ghToken},
		{"github-pat", "", `{"config.ini": "GITHUB_TOKEN=` + ghToken + `\nBACKUP_ENABLED=true"}`, ghToken},
		{"github-pat", "", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", ""},
		// privatekey.go
		{"private-key", "", rsaKey + "\n", rsaKey},
		{"private-key", "", "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----", ""},
		{"private-key", "", "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----", ""},
		// slack.go
		{"slack-bot-token", "", `bot_api_token = "` + slackToken + `"`, slackToken},
		// stripe.go
		{"stripe-access-token", "", `stripeToken := "` + stripeKey + `"`, stripeKey},
		{"stripe-access-token", "", `nonMatchingToken := "task_test_4eC39HqLyjWDarjtT1zdp7dcTmPq9RvX"`, ""},
		// jwt.go
		{"jwt", "", `Authorization: Bearer ` + jwtToken, jwtToken},
		// generic.go
		{"generic-api-key", "", `"client_secret" : "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde",`, "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde"},
		{"generic-api-key", "", `aws_secret_access_key = ` + awsSecret, awsSecret},
		{"generic-api-key", "", ` utils.GetEnvOrDefault("api_token", "dafa7817-e246-48f3-91a7-e87653d587b8")`, "dafa7817-e246-48f3-91a7-e87653d587b8"},
		{"generic-api-key", "", `"accessor":"rA1wk0Y45YCufyfq",`, ""},
		{"generic-api-key", "", `report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d`, ""},
		{"generic-api-key", "", `author = "james.fake@ymail.com",`, ""},
		{"generic-api-key", "", `public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"`, ""},
		{"generic-api-key", "", `password = "` + ghToken + `"`, ""}, // the specific rule's
		// The global allowlist: a path, a line marked.
		{"aws-access-token", "vendor/github.com/x/y.go", `AWSToken := "` + awsKeyID + `"`, ""},
		{"aws-access-token", "", `AWSToken := "` + awsKeyID + `" // gitleaks:allow`, ""},
	} {
		t.Run(tt.rule+"/"+tt.text[:min(len(tt.text), 24)], func(t *testing.T) {
			var got []string
			for _, f := range Scan(tt.path, []byte(tt.text)) {
				if f.Rule == tt.rule {
					got = append(got, tt.text[f.Start:f.End])
				}
			}
			switch {
			case tt.secret == "" && len(got) > 0:
				t.Errorf("found %q", got)
			case tt.secret != "" && (len(got) != 1 || got[0] != tt.secret):
				t.Errorf("found %q, want %q (all: %+v)", got, tt.secret, Scan(tt.path, []byte(tt.text)))
			}
		})
	}
}

// A rule with nothing but a path reports the file by its name.
func TestPathRule(t *testing.T) {
	for path, want := range map[string]bool{
		"security/es_certificates/opensearch/es_kibana_client.p12": true,
		"ToDo/ToDo.UWP/ToDo.UWP_TemporaryKey.pfx":                  true,
		"doc/typenum/type.P126.html":                               false,
	} {
		fs := Scan(path, nil)
		if got := len(fs) == 1 && fs[0].Rule == "pkcs12-file" && fs[0].Line == 0; got != want {
			t.Errorf("%s: %+v", path, fs)
		}
	}
}

// The keyword prefilter works on lowercase text, which needs keywords in ASCII.
func TestKeywordsASCII(t *testing.T) {
	for _, k := range rules().keywords {
		for i := 0; i < len(k); i++ {
			if k[i] >= utf8.RuneSelf || k[i] != strings.ToLower(k[i : i+1])[0] {
				t.Errorf("keyword %q", k)
			}
		}
	}
	if n := len(rules().rules); n < 200 {
		t.Errorf("%d rules", n)
	}
}

// Offsets and lines count from the start of what is scanned, across
// fragments and, for ScanReader, across what it reads a piece at a time;
// a secret across a fragment's cut is found once.
func TestFragments(t *testing.T) {
	var b bytes.Buffer
	var want []Finding
	line := 1
	plant := func(s, rule, secret string) {
		start := b.Len() + strings.Index(s, secret)
		want = append(want, Finding{Rule: rule, Line: line + strings.Count(s[:strings.Index(s, secret)], "\n"), Start: int64(start), End: int64(start + len(secret))})
		b.WriteString(s)
		line += strings.Count(s, "\n")
	}
	filler := func(n int, long bool) {
		for n > 0 {
			l := "the quick brown fox jumps over the lazy dog\n"
			if long {
				l = strings.Repeat("x", 40)
			}
			b.WriteString(l)
			line += strings.Count(l, "\n")
			n -= len(l)
		}
	}
	plant("token = "+ghToken+"\n", "github-pat", ghToken)
	filler(fragSize-100, false)
	plant(rsaKey+"\n", "private-key", rsaKey) // across the first cut
	filler(3*fragSize, true)                  // one long line
	plant(" "+awsKeyID+" ", "aws-access-token", awsKeyID)
	filler(2*readSize, false)
	plant("\n"+ghToken+"\n", "github-pat", ghToken)
	content := b.Bytes()
	check := func(name string, got []Finding) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	check("Scan", Scan("", content))
	var got []Finding
	err := ScanReader(context.Background(), "", bytes.NewReader(content), func(f Finding) error { got = append(got, f); return nil })
	if err != nil {
		t.Fatal(err)
	}
	check("ScanReader", got)
}

// Masking keeps the length, the lines, and the text's kind: a masked JSON
// line is JSON still, a masked string literal one still.
func TestMask(t *testing.T) {
	keyJSON, _ := json.Marshal("note\n" + rsaKey + "\n" + `"quoted" \ é` + ghToken)
	head, body, _ := strings.Cut(rsaKey, "\n")
	bodyJSON, _ := json.Marshal(body)
	for _, tt := range []struct{ name, text string }{
		{"plain", "token = " + ghToken + "\nAWSToken := \"" + awsKeyID + "\"\n" + rsaKey + "\n"},
		{"escaped", `{"a":` + string(keyJSON) + `}` + "\n"},
		{"across strings", `{"a":"` + head + `","b":` + string(bodyJSON) + `}` + "\n"},
		{"unicode escapes", `{"a":"-----BEGIN RSA PRIVATE KEY-----\u000a` + strings.Repeat(`A\u0041\\`, 20) + `\nKEY-----"}` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := Scan("", []byte(tt.text))
			if len(fs) == 0 {
				t.Fatal("nothing found")
			}
			plain := []byte(tt.text)
			Mask(plain, fs)
			var stream bytes.Buffer
			m := NewJSONLinesMasker(&stream, fs)
			for i := 0; i < len(tt.text); i += 7 { // in pieces
				m.Write([]byte(tt.text[i:min(i+7, len(tt.text))]))
			}
			outs := map[string][]byte{"Mask": plain, "JSONLinesMasker": stream.Bytes()}
			if tt.name == "plain" {
				delete(outs, "JSONLinesMasker") // (masks inside JSON strings only)
			}
			for name, out := range outs {
				if len(out) != len(tt.text) || bytes.Count(out, []byte("\n")) != strings.Count(tt.text, "\n") {
					t.Errorf("%s: length or lines changed:\n%s", name, out)
				}
				for _, s := range []string{ghToken, awsKeyID, "MIIEpQIBAAKCAQEAn6", "AAKCAQEAn6/O8li"} {
					if bytes.Contains(out, []byte(s)) {
						t.Errorf("%s: %q left in\n%s", name, s, out)
					}
				}
				if len(Scan("", out)) != 0 {
					t.Errorf("%s: found again: %+v\n%s", name, Scan("", out), out)
				}
				if name == "JSONLinesMasker" {
					for _, l := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
						if !json.Valid(l) {
							t.Errorf("%s: not JSON: %s", name, l)
						}
					}
				}
			}
		})
	}
}

// Scanning speed, over this module's Go source and the agents' transcripts
// of its test fixtures, each repeated to 8 MiB: go test -bench Scan
// ./secrets/ reports MB/s.
func BenchmarkScan(b *testing.B) {
	for _, tt := range []struct{ name, glob string }{
		{"go", "../store/*.go"},
		{"jsonl", filepath.Join(fixtures.Dir(), "*", "*.jsonl")},
	} {
		b.Run(tt.name, func(b *testing.B) {
			names, _ := filepath.Glob(tt.glob)
			var text []byte
			for len(text) < 8<<20 {
				for _, n := range names {
					data, err := os.ReadFile(n)
					if err != nil {
						b.Fatal(err)
					}
					text = append(text, data...)
				}
			}
			rules()
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				Scan("", text)
			}
		})
	}
}

// Loading the rules, which the first scan of a run pays for.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load(); err != nil {
			b.Fatal(err)
		}
	}
}

// Trying rules only around their keywords finds what trying them on whole
// fragments finds, over this module's source, the agents' transcripts of
// its fixtures, and every sample above.
func TestWindows(t *testing.T) {
	var texts [][]byte
	for _, glob := range []string{"../store/*.go", filepath.Join(fixtures.Dir(), "*", "*.jsonl"), "../cli/testdata/script/*.txtar"} {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, b)
		}
	}
	var samples bytes.Buffer
	for _, s := range []string{ghToken, awsKeyID, "aws_secret_access_key = " + awsSecret, stripeKey, slackToken, jwtToken, rsaKey, `"client_secret" : "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde",`} {
		fmt.Fprintf(&samples, "x := %q\n%s\n", s, s)
	}
	texts = append(texts, samples.Bytes())
	scan := func(text []byte, whole bool) []Finding {
		var out []Finding
		s := newScanner("", func(f Finding) error { out = append(out, f); return nil })
		s.whole = whole
		s.scan(text, false)
		return out
	}
	n := 0
	for _, text := range texts {
		got, want := scan(text, false), scan(text, true)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("windows found %+v\nwhole fragments %+v", got, want)
		}
		n += len(want)
	}
	if n < 10 {
		t.Errorf("only %d findings: the comparison says little", n)
	}
}
