package replay

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
)

// demos holds the five demos of the seed for pm demo --talk (N-name.json)
// and the small project they explore (project/).
//
//go:embed demos
var demos embed.FS

// TalkDemos are pm demo --talk's demos, in order.
func TalkDemos() ([]*Script, error) {
	names, err := fs.Glob(demos, "demos/*.json")
	if err != nil {
		return nil, err
	}
	var out []*Script
	for _, n := range names {
		data, err := demos.ReadFile(n)
		if err != nil {
			return nil, err
		}
		s, err := Load(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if s.Talk == nil {
			return nil, fmt.Errorf("%s: replay script: no talk section", n)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Script) int { return a.Talk.N - b.Talk.N })
	return out, nil
}

// TalkDemo finds a demo by number ("2") or name ("binding").
func TalkDemo(which string) (*Script, error) {
	all, err := TalkDemos()
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(which)
	var names []string
	for _, s := range all {
		if s.Talk.N == n || strings.EqualFold(s.Talk.Name, which) {
			return s, nil
		}
		names = append(names, fmt.Sprintf("%d %s", s.Talk.N, s.Talk.Name))
	}
	return nil, errs.Usagef("pm demo --talk with one of: "+strings.Join(names, ", "), "no demo %q", which)
}

// DemoProject is the files the demos explore, by path relative to the
// project (README.md, lib/calc.rb, ...).
func DemoProject() (map[string][]byte, error) {
	root, err := fs.Sub(demos, "demos/project")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		out[p] = data
		return err
	})
	return out, err
}
