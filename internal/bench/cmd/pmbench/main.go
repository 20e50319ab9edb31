// Command pmbench is the multi-process benchmark harness of pm: it builds pm
// (or takes -pm), runs real pm processes against generated state in a
// temporary directory and prints a table of figures against their goals.
// See docs/benchmarks.md.
//
//	go run ./internal/bench/cmd/pmbench [-quick] [-pm BIN] [-only startup,scale,delivery,append,say,reads,chatslope,done,roundtrip,idle,dashboard,respawn,hub,failover]
//
// The floor programs (internal/bench/cmd/floorappend, floorwatch) are built
// from the module and run interleaved with pm: startup and delivery report
// pm's figures as ratios to them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bench"
)

// sizes are the figures' inputs.
type sizes struct {
	Messages        int // delivery latency: sequential say processes
	Writers, PerW   int // concurrent appends
	SayW, SayPer    int // concurrent pm say
	Tasks, Events   int // read commands
	Runs            int // timed runs per read command
	StartupRuns     int // interleaved runs of each short command and the floor
	Files, Changed  int // pm done
	Rounds          int
	MessagesInPhase int
	ChatRoom        int           // chatslope: the large room (the small one is 1,000 messages)
	ChatRuns        int           // chatslope: runs of each command on each room
	Calls           int           // PO round trips
	IdleObjects     int           // idle resident agents
	IdleWindow      time.Duration // CPU sampling window
	Respawns        int           // killed hosts
	Clients         int           // dashboard websocket clients at once
	ScaleTasks      int           // the large state of the constant-time figures
	ScaleRuns       int           // interleaved runs of each constant-time figure
	HubMessages     int           // hub: says from one machine to a follower on another
	HubRooms        int           // hub: rooms of 50 filled by 3 machines x 16 writers
	FailoverTrials  int           // failover: workers killed -9, each running one agent
}

var full = sizes{Messages: 1000, Writers: 16, PerW: 500, SayW: 16, SayPer: 500, Tasks: 10_000, Events: 1_000_000,
	Runs: 20, StartupRuns: 200, Files: 10_000, Changed: 10, Rounds: 5, MessagesInPhase: 20,
	Calls: 200, IdleObjects: 50, IdleWindow: 10 * time.Second, Respawns: 10, Clients: 50, ScaleTasks: 100_000, ScaleRuns: 60,
	ChatRoom: 50_000, ChatRuns: 15, HubMessages: 300, HubRooms: 6, FailoverTrials: 10}

var quick = sizes{Messages: 200, Writers: 16, PerW: 100, SayW: 8, SayPer: 50, Tasks: 1_000, Events: 100_000,
	Runs: 10, StartupRuns: 40, Files: 2_000, Changed: 10, Rounds: 3, MessagesInPhase: 20,
	Calls: 30, IdleObjects: 10, IdleWindow: 3 * time.Second, Respawns: 4, Clients: 10, ScaleTasks: 5_000, ScaleRuns: 30,
	ChatRoom: 10_000, ChatRuns: 7, HubMessages: 50, HubRooms: 2, FailoverTrials: 3}

func main() {
	var (
		quickF  = flag.Bool("quick", false, "smaller sizes, for a fast check")
		bin     = flag.String("pm", "", "pm binary to measure (default: go build ./cmd/pm)")
		only    = flag.String("only", "", "comma-separated figures to run: overhead, startup, scale, delivery, append, say, reads, chatslope, done, roundtrip, mcp, idle, dashboard, respawn, hub, failover")
		keep    = flag.Bool("keep", false, "keep the temporary directory")
		timeout = flag.Duration("timeout", 20*time.Minute, "stop the whole run after this long")
		// Helper mode: one append writer process (used by the append figure).
		workerPath = flag.String("append-worker", "", "internal: append records to this log and exit")
		workerID   = flag.Int("worker-id", 0, "internal: writer id")
		workerN    = flag.Int("worker-n", 0, "internal: records to append")
	)
	flag.Parse()
	if *workerPath != "" {
		if err := bench.AppendWorker(*workerPath, *workerID, *workerN); err != nil {
			fmt.Fprintln(os.Stderr, "pmbench worker:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	sz := full
	if *quickF {
		sz = quick
	}
	var want []string
	if *only != "" {
		want = strings.Split(*only, ",")
	}
	code := run(ctx, sz, *bin, want, *keep)
	os.Exit(code)
}

func run(ctx context.Context, sz sizes, bin string, want []string, keep bool) int {
	tmp, err := os.MkdirTemp("", "pmbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if keep {
		fmt.Fprintln(os.Stderr, "pmbench: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	mod, err := bench.ModuleDir(ctx)
	if err == nil && bin == "" {
		bin, err = bench.Build(ctx, mod, tmp)
	}
	var floor *bench.Floor
	if err == nil {
		floor, err = bench.BuildFloor(ctx, mod, tmp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pmbench:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pmbench: %d CPUs, %s %s/%s, pm %s\nload average at start: %s\n\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, bin, bench.LoadAvg())
	var rows []bench.Row
	failed := false
	step := func(name string, fn func(dir string) ([]bench.Row, error)) {
		if len(want) > 0 && !slices.Contains(want, name) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		dir, err := os.MkdirTemp(tmp, name+"-")
		if err == nil {
			start := time.Now()
			fmt.Fprintf(os.Stderr, "pmbench: %s ...", name)
			var r []bench.Row
			r, err = fn(dir)
			fmt.Fprintf(os.Stderr, " %.1fs\n", time.Since(start).Seconds())
			rows = append(rows, r...)
			for _, x := range r {
				failed = failed || x.Verdict == "FAILED"
			}
		}
		if err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "pmbench: %s: %v\n", name, err)
			rows = append(rows, bench.Row{Figure: name, Result: "error: " + firstLine(err.Error()), Verdict: "FAILED"})
		}
		if !keep {
			os.RemoveAll(dir)
		}
	}

	step("startup", func(dir string) ([]bench.Row, error) {
		cases, err := bench.Startup(ctx, bin, floor, dir, sz.StartupRuns)
		if err != nil {
			return nil, err
		}
		var rows []bench.Row
		for _, c := range cases {
			r := c.Ratio()
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("%s / floorappend, medians of %d interleaved runs", c.Name, len(c.PM)), Goal: "<= 1.5x",
				Result:  fmt.Sprintf("%.2fx (%s / %s)", r, bench.Ms(c.PM.Median()), bench.Ms(c.Floor.Median())),
				Verdict: bench.Verdict(r <= 1.5)})
		}
		return rows, nil
	})
	step("overhead", func(dir string) ([]bench.Row, error) {
		ovs, err := bench.Overheads(filepath.Join(dir, "project"))
		if err != nil {
			return nil, err
		}
		var rows []bench.Row
		for _, o := range ovs {
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("pm's overhead per llm call, %s: system prompt + %d tools (+ pm's messages)", o.Role, len(o.Names)),
				Result: fmt.Sprintf("%d + %d = %d bytes, ≈ %d tokens (+ %d bytes)", o.Prompt, o.Tools, o.Fixed(), o.Tokens(), o.Context)})
		}
		f, err := bench.LandingFlow(ctx, bin, dir)
		if err != nil {
			return rows, err
		}
		rows = append(rows, bench.Row{Figure: fmt.Sprintf("landing flow (pm demo, replayed): %d model calls, tokens in / out", f.Calls),
			Result: fmt.Sprintf("%d / %d; $%.4f at %s's price", f.Usage.Input+f.Usage.Cached, f.Usage.Output, f.USD, bench.ReferenceModel)})
		return rows, nil
	})
	step("chatslope", func(dir string) ([]bench.Row, error) {
		small, large := 1_000, sz.ChatRoom
		cases, err := bench.ChatSlope(ctx, bin, dir, small, large, sz.ChatRuns)
		if err != nil {
			return nil, err
		}
		cat := cases[0].Slope(small, large)
		rows := []bench.Row{{Figure: fmt.Sprintf("cat messages.jsonl: wall slope per message, rooms of %d / %d, medians of %d interleaved runs", small, large, len(cases[0].Large)),
			Result: fmt.Sprintf("%d ns (%s / %s; peak RSS at %d: %.1f MiB)", cat.Nanoseconds(), bench.Ms(cases[0].Small.Median()), bench.Ms(cases[0].Large.Median()),
				large, float64(cases[0].LargeRSS)/1024)}}
		for _, c := range cases[1:] {
			sl := c.Slope(small, large)
			r := float64(sl) / float64(max(cat, 1))
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("%s: wall slope per message / cat's, output drained from a pipe", c.Name), Goal: "<= 3x",
				Result: fmt.Sprintf("%.2fx (%d ns; %s / %s; peak RSS at %d: %.1f MiB)", r, sl.Nanoseconds(),
					bench.Ms(c.Small.Median()), bench.Ms(c.Large.Median()), large, float64(c.LargeRSS)/1024),
				Verdict: bench.Verdict(r <= 3)})
		}
		return rows, nil
	})
	step("scale", func(dir string) ([]bench.Row, error) {
		cases, err := bench.Scale(ctx, bin, dir, 10, sz.ScaleTasks, sz.ScaleRuns)
		if err != nil {
			return nil, err
		}
		var rows []bench.Row
		for _, c := range cases {
			r := c.Ratio()
			sRSS, lRSS := c.MaxRSS()
			row := bench.Row{Figure: fmt.Sprintf("%s at %d tasks / at %d, medians of %d interleaved runs", c.Name, c.LargeTasks, c.SmallTasks, len(c.Large)),
				Goal:    "<= 1.1x",
				Result:  fmt.Sprintf("%.2fx (%s / %s; peak RSS %.1f / %.1f MiB)", r, bench.Ms(c.Large.Median()), bench.Ms(c.Small.Median()), float64(lRSS)/1024, float64(sRSS)/1024),
				Verdict: bench.Verdict(r <= 1.1)}
			if c.Name == "pm status" {
				// Not a constant-time command: it counts one directory entry
				// per finished task (decoding none); its goal is the next row.
				row.Goal, row.Verdict = "", ""
			}
			rows = append(rows, row)
			if c.Name == "pm status" {
				m := c.Large.Median()
				rows = append(rows, bench.Row{Figure: fmt.Sprintf("pm status at %d tasks, median; peak RSS over the %d-task state's", c.LargeTasks, c.SmallTasks),
					Goal: "< 100 ms, RSS not growing", Result: fmt.Sprintf("%s; %.1f vs %.1f MiB", bench.Ms(m), float64(lRSS)/1024, float64(sRSS)/1024),
					Verdict: bench.Verdict(m < 100*time.Millisecond && float64(lRSS) <= 1.1*float64(sRSS))})
			}
		}
		return rows, nil
	})
	step("hub", func(dir string) ([]bench.Row, error) {
		return hubRows(ctx, bin, dir, sz)
	})
	step("failover", func(dir string) ([]bench.Row, error) {
		return failoverRows(ctx, bin, dir, sz)
	})
	step("delivery", func(dir string) ([]bench.Row, error) {
		r, err := bench.Delivery(ctx, bin, floor, dir, sz.Messages)
		if err != nil {
			return nil, err
		}
		fStart, fExit := r.FloorFromStart, r.FloorFromExit
		lat, app, say := r.Latency, r.FromAppend, r.Say
		p99 := lat.Percentile(99)
		sm, s90 := say.Median(), say.Percentile(90)
		return []bench.Row{
			{Figure: fmt.Sprintf("delivery: say exit -> chat --follow line, p50 / p99 (%d msgs)", len(lat)), Goal: "p99 < 5 ms",
				Result: fmt.Sprintf("%s / %s (max %s; %d of %d printed before say exited)", bench.Ms(lat.Median()), bench.Ms(p99),
					bench.Ms(lat.Percentile(100)), r.Early, len(lat)), Verdict: bench.Verdict(p99 < 5*time.Millisecond)},
			{Figure: "delivery: message timestamp -> chat --follow line, p50 / p99",
				Result: fmt.Sprintf("%s / %s (max %s)", bench.Ms(app.Median()), bench.Ms(app.Percentile(99)), bench.Ms(app.Percentile(100)))},
			{Figure: "delivery: say start -> line, p50 / p99, over the floor pair (floorappend -> floorwatch), interleaved", Goal: "<= 1.5x",
				Result: fmt.Sprintf("%.2fx / %.2fx (pm %s / %s; floor %s / %s; floor exit -> line %s)",
					ratio(r.FromStart.Median(), fStart.Median()), ratio(r.FromStart.Percentile(99), fStart.Percentile(99)),
					bench.Ms(r.FromStart.Median()), bench.Ms(r.FromStart.Percentile(99)), bench.Ms(fStart.Median()), bench.Ms(fStart.Percentile(99)), bench.Ms(fExit.Median())),
				Verdict: bench.Verdict(ratio(r.FromStart.Median(), fStart.Median()) <= 1.5 && ratio(r.FromStart.Percentile(99), fStart.Percentile(99)) <= 1.5)},
			{Figure: "pm say process wall time, median", Goal: "< 10 ms", Result: bench.Ms(sm), Verdict: bench.Verdict(sm < 10*time.Millisecond)},
			{Figure: "pm say process wall time, p90 / min", Result: bench.Ms(s90) + " / " + bench.Ms(say.Percentile(0))},
		}, nil
	})
	step("append", func(dir string) ([]bench.Row, error) {
		d, c, err := bench.ConcurrentAppend(ctx, self, dir, sz.Writers, sz.PerW)
		if err != nil {
			return nil, err
		}
		n := sz.Writers * sz.PerW
		return []bench.Row{{Figure: fmt.Sprintf("%d processes x %d jsonl.Append, one log", sz.Writers, sz.PerW),
			Result:  fmt.Sprintf("%.0f appends/s (%d in %s); %s", float64(n)/d.Seconds(), n, bench.Ms(d), c),
			Verdict: check(c.OK() && c.Lines == n)}}, nil
	})
	step("say", func(dir string) ([]bench.Row, error) {
		r, err := bench.ConcurrentSay(ctx, bin, dir, sz.SayW, sz.SayPer)
		if err != nil {
			return nil, err
		}
		n := sz.SayW * sz.SayPer
		ok := r.Check.OK() && r.Check.Lines == n && r.Refused == 0 && r.ExtraExit == 5 && r.PhaseClose
		return []bench.Row{{Figure: fmt.Sprintf("%d writers x %d pm say processes, one phase (limit %d)", sz.SayW, sz.SayPer, n),
			Result: fmt.Sprintf("%.0f says/s (%s); %s; closed at limit %v, one more exits %d",
				float64(n)/r.Wall.Seconds(), bench.Ms(r.Wall), r.Check, r.PhaseClose, r.ExtraExit),
			Verdict: check(ok)}}, nil
	})
	step("reads", func(dir string) ([]bench.Row, error) {
		spec := bench.StateSpec{Tasks: sz.Tasks, Events: sz.Events, MessagesPerPhase: sz.MessagesInPhase}
		cases, err := bench.Reads(ctx, bin, dir, spec, sz.Runs)
		if err != nil {
			return nil, err
		}
		rows := []bench.Row{{Figure: fmt.Sprintf("reads: %d tasks, agents and %d-message phases; %d events",
			sz.Tasks, sz.MessagesInPhase, sz.Events)}}
		for _, c := range cases {
			m := c.Times.Median()
			r := bench.Row{Figure: fmt.Sprintf("  %s, median of %d", c.Name, len(c.Times)),
				Result: fmt.Sprintf("%s (min %s, p90 %s)", bench.Ms(m), bench.Ms(c.Times.Percentile(0)), bench.Ms(c.Times.Percentile(90)))}
			if c.Goal {
				r.Goal, r.Verdict = "< 100 ms", bench.Verdict(m < 100*time.Millisecond)
			}
			rows = append(rows, r)
		}
		return rows, nil
	})
	step("done", func(dir string) ([]bench.Row, error) {
		r, err := bench.Done(ctx, bin, dir, sz.Files, sz.Changed, sz.Rounds)
		if err != nil {
			return nil, err
		}
		pm, git := r.PM.Median(), r.Git.Median()
		ratio := float64(pm) / float64(git)
		return []bench.Row{
			{Figure: fmt.Sprintf("pm done, %d files, %d changed, median of %d", sz.Files, sz.Changed, len(r.PM)), Result: fmt.Sprintf("%s (min %s)", bench.Ms(pm), bench.Ms(r.PM.Percentile(0)))},
			{Figure: "git add -A && git commit, same repo, median", Result: fmt.Sprintf("%s (min %s)", bench.Ms(git), bench.Ms(r.Git.Percentile(0)))},
			{Figure: "pm done / git", Goal: "within 3x", Result: fmt.Sprintf("%.2fx", ratio), Verdict: bench.Verdict(ratio <= 3)},
		}, nil
	})
	step("roundtrip", func(dir string) ([]bench.Row, error) {
		cold, warm, err := bench.RoundTrip(ctx, bin, dir, sz.Calls)
		if err != nil {
			return nil, err
		}
		p99 := warm.Percentile(99)
		return []bench.Row{
			{Figure: fmt.Sprintf("PO round trip human -> @greeter -> reply, idle process, p50 / p99 (%d calls)", len(warm)), Goal: "p99 < 20 ms",
				Result:  fmt.Sprintf("%s / %s (min %s, max %s)", bench.Ms(warm.Median()), bench.Ms(p99), bench.Ms(warm.Percentile(0)), bench.Ms(warm.Percentile(100))),
				Verdict: bench.Verdict(p99 < 20*time.Millisecond)},
			{Figure: "PO round trip, median of the first / last tenth of calls (the conversation grows)",
				Result: bench.Ms(warm[:len(warm)/10+1].Median()) + " / " + bench.Ms(warm[len(warm)-len(warm)/10-1:].Median())},
			{Figure: "PO round trip, cold (first call starts pm agent-run)", Result: bench.Ms(cold)},
		}, nil
	})
	step("mcp", func(dir string) ([]bench.Row, error) {
		r, err := bench.MCP(ctx, bin, dir, sz.Calls)
		if err != nil {
			return nil, err
		}
		sp, up := r.Send.Percentile(99), r.Updated.Percentile(99)
		return []bench.Row{
			{Figure: fmt.Sprintf("pm mcp (stdio) tools/call send_message -> @greeter, idle process, p50 / p99 (%d calls)", len(r.Send)), Goal: "p99 < 50 ms",
				Result:  fmt.Sprintf("%s / %s (min %s, max %s)", bench.Ms(r.Send.Median()), bench.Ms(sp), bench.Ms(r.Send.Percentile(0)), bench.Ms(r.Send.Percentile(100))),
				Verdict: bench.Verdict(sp < 50*time.Millisecond)},
			{Figure: fmt.Sprintf("pm mcp: pm say exit -> notifications/resources/updated, p50 / p99 (%d says)", len(r.Updated)), Goal: "p99 < 20 ms",
				Result:  fmt.Sprintf("%s / %s (max %s; %d before say exited)", bench.Ms(r.Updated.Median()), bench.Ms(up), bench.Ms(r.Updated.Percentile(100)), r.Early),
				Verdict: bench.Verdict(up < 20*time.Millisecond)},
			{Figure: "pm mcp: pm say start -> notifications/resources/updated, p50 / p99 (includes starting pm say)",
				Result: bench.Ms(r.FromStart.Median()) + " / " + bench.Ms(r.FromStart.Percentile(99))},
		}, nil
	})
	step("idle", func(dir string) ([]bench.Row, error) {
		r, err := bench.Idle(ctx, bin, dir, sz.IdleObjects, sz.IdleWindow)
		if err != nil {
			return nil, err
		}
		slices.Sort(r.RSSKiB)
		med, mx := r.RSSKiB[(len(r.RSSKiB)-1)/2], r.RSSKiB[len(r.RSSKiB)-1]
		return []bench.Row{
			{Figure: fmt.Sprintf("%d idle resident agents, CPU over %s, all together", len(r.RSSKiB), sz.IdleWindow), Goal: "~0%",
				Result: fmt.Sprintf("%.2f%% of one CPU", r.CPU), Verdict: bench.Verdict(r.CPU < 1)},
			{Figure: "idle resident agent RSS, median / max", Goal: "< 15 MiB each",
				Result:  fmt.Sprintf("%.1f / %.1f MiB", float64(med)/1024, float64(mx)/1024),
				Verdict: bench.Verdict(mx < 15*1024)},
		}, nil
	})
	step("dashboard", func(dir string) ([]bench.Row, error) {
		r, err := bench.Dashboard(ctx, bin, dir, sz.Messages, sz.Clients, sz.Runs, sz.IdleWindow,
			bench.StateSpec{Tasks: sz.Tasks, Events: sz.Events, MessagesPerPhase: sz.MessagesInPhase})
		if err != nil {
			return nil, err
		}
		pct := func(d bench.Durations) string { return bench.Ms(d.Median()) + " / " + bench.Ms(d.Percentile(99)) }
		return []bench.Row{
			{Figure: fmt.Sprintf("pm dashboard: pm say exit -> websocket frame, one client, p50 / p99 (%d messages)", len(r.One)),
				Goal: "p99 < 20 ms", Result: pct(r.One), Verdict: bench.Verdict(r.One.Percentile(99) < 20*time.Millisecond)},
			{Figure: "  the same, from the event's timestamp (its append) -> frame, p50 / p99", Result: pct(r.OneFromWrite)},
			{Figure: fmt.Sprintf("  %d clients at once: every client has every event", r.Clients), Goal: "0 missing",
				Result: fmt.Sprintf("%d missing", r.Missing), Verdict: map[bool]string{true: "ok", false: "FAILED"}[r.Missing == 0]},
			{Figure: fmt.Sprintf("  %d clients at once: the slowest client, p50 / p99", r.Clients), Goal: "p99 < 20 ms",
				Result: pct(r.Slowest), Verdict: bench.Verdict(r.Slowest.Percentile(99) < 20*time.Millisecond)},
			{Figure: fmt.Sprintf("  server CPU, idle with %d clients, over %s", r.Clients, r.IdleWindow), Goal: "~0%",
				Result: fmt.Sprintf("%.2f%% of one CPU", r.IdleCPU), Verdict: bench.Verdict(r.IdleCPU < 1)},
			{Figure: fmt.Sprintf("  GET /api/state, %d tasks (live view), median / p99 of %d", r.StateTasks, len(r.State)), Goal: "< 100 ms",
				Result: pct(r.State), Verdict: bench.Verdict(r.State.Percentile(99) < 100*time.Millisecond)},
			{Figure: fmt.Sprintf("  GET /api/state?all=1&limit=10000, %d tasks, median / p99 of %d", r.StateTasks, len(r.StateAll)), Goal: "< 100 ms",
				Result: pct(r.StateAll), Verdict: bench.Verdict(r.StateAll.Percentile(99) < 100*time.Millisecond)},
		}, nil
	})
	step("respawn", func(dir string) ([]bench.Row, error) {
		ds, err := bench.Respawn(ctx, bin, dir, sz.Respawns)
		if err != nil {
			return nil, err
		}
		mx := ds.Percentile(100)
		return []bench.Row{{Figure: fmt.Sprintf("kill -9 a resident host -> new live pid in agent.json, median / max (%d agents)", len(ds)),
			Goal: "< 1 s", Result: fmt.Sprintf("%s / %s (min %s)", bench.Ms(ds.Median()), bench.Ms(mx), bench.Ms(ds.Percentile(0))),
			Verdict: bench.Verdict(mx < time.Second)}}, nil
	})

	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "pmbench: stopped:", ctx.Err())
		failed = true
	}
	fmt.Println()
	bench.Print(os.Stdout, rows)
	fmt.Printf("\nload average at end: %s (on a busy machine every figure is worse; compare min with median)\n", bench.LoadAvg())
	if failed {
		return 1
	}
	return 0
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func check(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 160 {
		line = line[:160] + "..."
	}
	return line
}

// hubRows are the figures of pm on a three-node hub (issue 24), each
// against the engine's own floor measured in the same run: raw JetStream
// on the same cluster.
func hubRows(ctx context.Context, bin, dir string, sz sizes) ([]bench.Row, error) {
	d, err := bench.HubDelivery(ctx, bin, filepath.Join(dir, "delivery"), sz.HubMessages)
	if err != nil {
		return nil, err
	}
	const machines, writers, limit = 3, 16, 50
	says, err := bench.HubSays(ctx, bin, filepath.Join(dir, "says"), machines, writers, sz.HubRooms, limit)
	if err != nil {
		return nil, err
	}
	pm50, pm99 := d.FromAppend.Median(), d.FromAppend.Percentile(99)
	f50, f99 := d.Floor.Median(), d.Floor.Percentile(99)
	rate := float64(says.Says) / says.Elapsed.Seconds()
	floorRate := float64(says.FloorAppends) / says.FloorElapsed.Seconds()
	exact := bench.Row{Figure: fmt.Sprintf("hub: %d rooms of %d filled by %d machines x %d writers: exactly the limit each", sz.HubRooms, limit, machines, writers),
		Result: fmt.Sprintf("%d says accepted, %d refused at a limit, %d failed", says.Says, says.Refused, says.Errors), Verdict: "ok"}
	if !says.Exact || says.Errors > 0 {
		exact.Verdict = "FAILED"
		exact.Result += "; first error: " + firstLine(says.FirstError)
	}
	return []bench.Row{
		{Figure: fmt.Sprintf("hub: say (machine a, node 1) -> chat --follow line (machine b, node 2), message timestamp -> line, p50 / p99 (%d msgs)", len(d.FromAppend)),
			Result: fmt.Sprintf("%s / %s", bench.Ms(pm50), bench.Ms(pm99))},
		{Figure: "hub: that over the floor, raw JetStream publish (node 1) -> ordered consumer (node 2), same cluster, interleaved, p50 / p99",
			Result: fmt.Sprintf("%.1fx / %.1fx (floor %s / %s)", ratio(pm50, f50), ratio(pm99, f99), bench.Ms(f50), bench.Ms(f99))},
		{Figure: "hub: pm say process wall time (pm -> pm-full, three-node hub), median / p90",
			Result: bench.Ms(d.Say.Median()) + " / " + bench.Ms(d.Say.Percentile(90))},
		exact,
		{Figure: fmt.Sprintf("hub: says per second, %d machines x %d writers (pm say processes) into rooms of %d, three nodes", machines, writers, limit),
			Result: fmt.Sprintf("%.1f says/s (%d in %.1f s)", rate, says.Says, says.Elapsed.Seconds())},
		{Figure: "hub: that over the floor, raw publishes with the expected last subject sequence, same writers as goroutines, same cluster",
			Result: fmt.Sprintf("%.3fx the floor's rate (floor %.0f appends/s, %d in %.2f s)", rate/max(floorRate, 1e-9), floorRate, says.FloorAppends, says.FloorElapsed.Seconds())},
	}, nil
}

// failoverLease is the lease TTL the failover figure configures
// (store.lease_seconds): short, so that a trial takes seconds.
const failoverLease = 2 * time.Second

// failoverRows are the third speed figure of issue 24: the time from a
// worker's death (kill -9) to its agent running on another worker, against
// the lease TTL it cannot beat.
func failoverRows(ctx context.Context, bin, dir string, sz sizes) ([]bench.Row, error) {
	r, err := bench.Failover(ctx, bin, dir, sz.FailoverTrials, failoverLease)
	if err != nil {
		return nil, err
	}
	p50, p99 := r.Failover.Median(), r.Failover.Percentile(99)
	return []bench.Row{
		{Figure: fmt.Sprintf("hub: worker killed -9 -> its exec agent running on the other worker (marker written), p50 / p99 (%d trials, one node)", len(r.Failover)),
			Result: fmt.Sprintf("%s / %s (min %s, max %s)", bench.Ms(p50), bench.Ms(p99), bench.Ms(r.Failover.Percentile(0)), bench.Ms(r.Failover.Percentile(100)))},
		{Figure: "hub: that over its floor, the lease TTL (store.lease_seconds), p50 / p99",
			Result: fmt.Sprintf("%.2fx / %.2fx (TTL %s)", ratio(p50, r.TTL), ratio(p99, r.TTL), bench.Ms(r.TTL))},
	}, nil
}
