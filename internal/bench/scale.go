package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/store"
)

// ScaleCase is one command timed on a small and a large generated state,
// interleaved, with the peak RSS of each run.
type ScaleCase struct {
	Name                   string
	Small, Large           Durations
	SmallRSS, LargeRSS     []int64 // KiB, one run each under GNU time (PeakRSS); empty without it
	SmallTasks, LargeTasks int
}

// Ratio is the large state's median over the small one's.
func (c ScaleCase) Ratio() float64 { return ratio(c.Large.Median(), c.Small.Median()) }

// MaxRSS is the largest peak RSS of the runs on the large state, in KiB.
func (c ScaleCase) MaxRSS() (small, large int64) { return maxOf(c.SmallRSS), maxOf(c.LargeRSS) }

func maxOf(v []int64) int64 {
	m := int64(0)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// Scale generates a state of small and one of large tasks (all finished but
// one active task with an active phase) and times pm task (human), pm say
// (the owner agent and the human) and pm status on both, interleaved, runs
// times each: the constant-time goals of issue 14.
func Scale(ctx context.Context, bin, dir string, small, large, runs int) ([]ScaleCase, error) {
	var pms [2]*PM
	var owners [2]string
	for i, n := range []int{small, large} {
		d := filepath.Join(dir, strconv.Itoa(n))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		st, err := Generate(d, StateSpec{Tasks: n, MessagesPerPhase: 1, ActiveLimit: 2*runs + 10}) // two says a run
		if err != nil {
			return nil, err
		}
		// Each pm task leaves a live task: room for all of them.
		if err := raiseActiveLimit(st.Root, 4*runs+10); err != nil {
			return nil, err
		}
		pms[i] = &PM{Bin: bin, Dir: d, Env: append(Env(d), "PM_NO_SUPERVISOR=1"), Home: st.Root}
		owners[i] = st.Owner
	}
	cases := []struct {
		name  string
		agent bool
		args  func(k int) []string
	}{
		{"pm task (human)", false, func(k int) []string { return []string{"task", fmt.Sprintf("scale task %d", k), "--runtime", "none"} }},
		{"pm say (agent)", true, func(k int) []string { return []string{"say", fmt.Sprintf("agent message %d", k)} }},
		{"pm say (human)", false, func(k int) []string { return []string{"say", fmt.Sprintf("human message %d", k)} }},
		{"pm status", false, func(int) []string { return []string{"status"} }},
	}
	var res []ScaleCase
	for _, c := range cases {
		sc := ScaleCase{Name: c.name, SmallTasks: small, LargeTasks: large}
		for k := range runs {
			for i := range pms {
				agent := ""
				if c.agent {
					agent = owners[i]
				}
				d, err := pms[i].Time(ctx, 1, agent, c.args(k)...)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					sc.Small = append(sc.Small, d...)
				} else {
					sc.Large = append(sc.Large, d...)
				}
			}
		}
		for i := range pms {
			agent := ""
			if c.agent {
				agent = owners[i]
			}
			rss, err := PeakRSS(ctx, pms[i].Command(ctx, agent, c.args(runs)...), dir)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			if i == 0 {
				sc.SmallRSS = append(sc.SmallRSS, rss)
			} else {
				sc.LargeRSS = append(sc.LargeRSS, rss)
			}
		}
		res = append(res, sc)
	}
	return res, nil
}

func raiseActiveLimit(root string, n int) error {
	s := &store.Store{Root: root}
	_, err := s.UpdateConfig(func(tree map[string]any) error {
		config.SetConfigKey(tree, "limits.active_tasks", n)
		return nil
	})
	return err
}
