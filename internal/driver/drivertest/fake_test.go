package drivertest

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
)

func TestFakeLifecycle(t *testing.T) {
	tests := []struct {
		name  string
		end   func(d *Driver, h driver.Handle)
		code  int
		stops int
	}{
		{"the test ends it with exit 0", func(d *Driver, h driver.Handle) { d.Exit(h, 0) }, 0, 0},
		{"the test ends it with a crash", func(d *Driver, h driver.Handle) { d.Exit(h, 137) }, 137, 0},
		{"Stop", func(d *Driver, h driver.Handle) { _, _ = d.Stop(context.Background(), h) }, 128 + 15, 1},
		{"SIGKILL", func(d *Driver, h driver.Handle) { _ = d.Signal(h, syscall.SIGKILL) }, 128 + 9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New()
			h, err := d.Start(context.Background(), driver.Spec{Name: "a", Argv: []string{"pm", "agent-run", "a"}})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Alive(h) || !slices.Equal(d.Running(), []driver.Handle{h}) {
				t.Fatal("a started run is not alive")
			}
			if err := d.Signal(h, syscall.SIGUSR1); err != nil || !d.Alive(h) {
				t.Fatalf("SIGUSR1 = %v; it must change nothing", err)
			}
			waited := make(chan driver.ExitStatus, 1)
			go func() {
				st, _ := d.Wait(context.Background(), h)
				waited <- st
			}()
			tt.end(d, h)
			select {
			case st := <-waited:
				if st.Code != tt.code {
					t.Fatalf("Wait = %+v, want code %d", st, tt.code)
				}
			case <-time.After(time.Minute): // hang guard only
				t.Fatal("Wait did not wake")
			}
			if d.Alive(h) || len(d.Running()) != 0 {
				t.Fatal("alive after its end")
			}
			if d.Exit(h, 1) {
				t.Fatal("a second end took effect")
			}
			if st, err := d.Wait(context.Background(), h); err != nil || st.Code != tt.code {
				t.Fatalf("a later Wait = %+v, %v", st, err)
			}
			if len(d.Stopped()) != tt.stops || len(d.Started()) != 1 || d.Started()[0].Name != "a" {
				t.Fatalf("records: started %v, stopped %v", d.Started(), d.Stopped())
			}
		})
	}
}

func TestFakeTokensAndFailures(t *testing.T) {
	d := New()
	a, _ := d.Start(context.Background(), driver.Spec{Name: "a"})
	b, _ := d.Start(context.Background(), driver.Spec{Name: "b"})
	if a == b {
		t.Fatal("two runs share a token")
	}
	var hooked []driver.Handle
	d.OnStart(func(h driver.Handle, _ driver.Spec) { hooked = append(hooked, h) })
	c, _ := d.Start(context.Background(), driver.Spec{Name: "c"})
	if !slices.Equal(hooked, []driver.Handle{c}) {
		t.Fatalf("OnStart saw %v", hooked)
	}
	d.FailStarts(ErrStart)
	if _, err := d.Start(context.Background(), driver.Spec{Name: "d"}); !errors.Is(err, ErrStart) {
		t.Fatalf("Start = %v, want ErrStart", err)
	}
	unknown := driver.Handle{Pid: 1, PidStart: 1}
	if d.Alive(unknown) {
		t.Fatal("a handle the fake never made is alive")
	}
	if st, err := d.Wait(context.Background(), unknown); err != nil || st.Code != driver.Unknown {
		t.Fatalf("Wait(unknown) = %+v, %v", st, err)
	}
	if err := d.Signal(unknown, syscall.SIGTERM); !errors.Is(err, driver.ErrGone) {
		t.Fatalf("Signal(unknown) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Wait(ctx, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context = %v", err)
	}
	if stopped, _ := d.Stop(context.Background(), a); !stopped {
		t.Fatal("Stop of a running run reported nothing")
	}
	if stopped, _ := d.Stop(context.Background(), a); stopped {
		t.Fatal("Stop of an ended run reported something")
	}
	if got := d.Signals(); len(got) != 1 || got[0] != (Signal{unknown, syscall.SIGTERM}) {
		t.Fatalf("signals %v", got)
	}
}
