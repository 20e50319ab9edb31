package bench

import (
	"fmt"
	"slices"
	"time"
)

// Durations is a sample of timings.
type Durations []time.Duration

// Percentile returns the p-th percentile (0..100) by the nearest-rank method.
func (d Durations) Percentile(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	rank = min(max(rank, 0), len(s)-1)
	return s[rank]
}

// Median is the 50th percentile.
func (d Durations) Median() time.Duration { return d.Percentile(50) }

// Ms formats a duration in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
