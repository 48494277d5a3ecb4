package jsonl

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
)

// Detection is which agent most likely wrote a transcript.
type Detection struct {
	Agent string `json:"agent"` // "" when unknown
	// Confidence is in [0, 1]: the share of the evidence for this agent, lowered when there is
	// little evidence (a path alone gives at most 0.5).
	Confidence float64  `json:"confidence"`
	Dialect    *Dialect `json:"-"`
}

// detectLines is how many complete lines of the head Detect looks at.
const detectLines = 64

// Detect tells the agent from a transcript's path (may be "") and the first bytes of its
// content (may be nil; only complete lines are used, at most 64).
func Detect(path string, head []byte) Detection {
	ds := Dialects()
	score := make([]float64, len(ds))
	p := filepath.ToSlash(path)
	for i, d := range ds {
		if d.Agent == nil {
			continue
		}
		for _, hint := range d.Agent.Folders.TranscriptHints {
			if hint != "" && strings.Contains(p, hint) {
				score[i] += 3
				break
			}
		}
	}
	if end := bytes.LastIndexByte(head, '\n'); end >= 0 {
		lines := bytes.Split(head[:end], []byte{'\n'})
		if len(lines) > detectLines {
			lines = lines[:detectLines]
		}
		for _, l := range lines {
			o := parseObject(Clean(l))
			if o == nil {
				continue
			}
			typ := o.str("type")
			for i, d := range ds {
				score[i] += d.lineScore(o, typ)
			}
		}
	}
	best, total := -1, 0.0
	for i, s := range score {
		total += s
		if s > 0 && (best < 0 || s > score[best]) {
			best = i
		}
	}
	if best < 0 {
		return Detection{}
	}
	share := score[best] / total
	evidence := math.Min(1, score[best]/6)
	conf := math.Round(share*evidence*100) / 100
	return Detection{Agent: ds[best].Name, Confidence: conf, Dialect: ds[best]}
}

// lineScore is how strongly one line points at this dialect.
func (d *Dialect) lineScore(o *object, typ string) float64 {
	if len(d.Detect.RequireAnyField) > 0 {
		found := false
		for _, f := range d.Detect.RequireAnyField {
			if _, ok := o.get(f); ok {
				found = true
				break
			}
		}
		if !found {
			return 0
		}
	}
	if len(d.Detect.SignatureFields) > 0 {
		all := true
		for _, f := range d.Detect.SignatureFields {
			if _, ok := o.get(f); !ok {
				all = false
				break
			}
		}
		if all {
			return 3
		}
	}
	switch {
	case typ == "":
		return 0
	case contains(d.Detect.SignatureTypes, typ):
		return 3
	case contains(d.Detect.Types, typ):
		return 1
	}
	return 0
}
