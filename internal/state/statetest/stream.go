package statetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
)

// appendN appends messages first..first+n-1 to the room, one transaction each.
func appendN(t *testing.T, st state.State, ph *state.Phase, first, n int) []state.Message {
	t.Helper()
	var out []state.Message
	for i := first; i < first+n; i++ {
		m := message(ph.ID, i)
		if err := st.WithPhase(ph.TaskID, ph.ID, func(tx state.RoomTx) error { return tx.Append(m) }); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// contents decodes raw messages to their contents.
func contents(t *testing.T, raws [][]byte) []string {
	t.Helper()
	out := []string{}
	for _, raw := range raws {
		var m state.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("a message read is not JSON: %q: %v", raw, err)
		}
		out = append(out, m.Content)
	}
	return out
}

func contentsOf(ms []state.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

// readRoom is ReadRoom into a list of copies.
func readRoom(t *testing.T, st state.State, taskID, phaseID string, from int) (raws [][]byte, next int) {
	t.Helper()
	next, err := st.ReadRoom(taskID, phaseID, from, nil, func(raw []byte) error {
		raws = append(raws, slices.Clone(raw))
		return nil
	})
	if err != nil {
		t.Fatalf("ReadRoom(%s, %s, %d): %v", taskID, phaseID, from, err)
	}
	return raws, next
}

// A room is read by position, a message's index: from any position on, the
// same messages as Messages, decoded into a view when one is given.
func testRoomRead(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 10)
	sent := appendN(t, st, ph, 0, 4)
	raws, next := readRoom(t, st, tk.ID, ph.ID, 0)
	if got := contents(t, raws); !slices.Equal(got, contentsOf(sent)) || next != 4 {
		t.Fatalf("from 0: %v, next %d; want %v, next 4", got, next, contentsOf(sent))
	}
	var v state.MessageView
	var ids []string
	next, err := st.ReadRoom(tk.ID, ph.ID, 2, &v, func([]byte) error {
		ids = append(ids, v.ID+" "+v.Content)
		return nil
	})
	want := []string{sent[2].ID + " " + sent[2].Content, sent[3].ID + " " + sent[3].Content}
	if err != nil || !slices.Equal(ids, want) || next != 4 {
		t.Fatalf("from 2 into a view: %v, next %d, %v; want %v", ids, next, err, want)
	}
	for _, from := range []int{4, 7} {
		if raws, next := readRoom(t, st, tk.ID, ph.ID, from); len(raws) != 0 || next != from {
			t.Fatalf("from %d: %d messages, next %d", from, len(raws), next)
		}
	}
	for _, room := range [][2]string{{tk.ID, "ph-000000"}, {"tk-000000", ph.ID}, {"nope", "../x"}} {
		if raws, next := readRoom(t, st, room[0], room[1], 0); len(raws) != 0 || next != 0 {
			t.Fatalf("room %v: %d messages, next %d", room, len(raws), next)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := st.ReadRoom(tk.ID, ph.ID, 0, nil, func([]byte) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, calls)
	}
}

// follow runs FollowRoom until the room closes, collecting what it hands on;
// first is closed once the first message came.
func follow(ctx context.Context, st state.State, ph *state.Phase, from int) (first <-chan struct{}, done <-chan followed) {
	f, d := make(chan struct{}), make(chan followed, 1)
	go func() {
		var out followed
		var once sync.Once
		out.next, out.err = st.FollowRoom(ctx, ph.TaskID, ph.ID, from, func() (bool, error) {
			p, err := st.Phase(ph.TaskID, ph.ID)
			return err == nil && p.Status != state.PhaseActive, err
		}, func(raw []byte) error {
			out.raws = append(out.raws, raw)
			once.Do(func() { close(f) })
			return nil
		})
		d <- out
	}()
	return f, d
}

type followed struct {
	raws [][]byte
	next int
	err  error
}

// A follower from a position gets every message from it on exactly once,
// in the room's order, those appended while it follows (by writers racing
// for the room's last places) too, and ends once the room is closed.
func testRoomFollow(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 8)
	appendN(t, st, ph, 0, 2)
	first, done := follow(context.Background(), st, ph, 1)
	<-first // following: what is appended now arrives as it lands
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				m := message(ph.ID, 100+10*w+i)
				err := st.WithPhase(ph.TaskID, ph.ID, func(tx state.RoomTx) error { return tx.Append(m) })
				if err != nil && !errors.Is(err, state.ErrRoomFull) && !errors.Is(err, state.ErrClosed) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got := <-done
	all, err := st.Messages(tk.ID, ph.ID)
	if err != nil || len(all) != 8 {
		t.Fatalf("the room holds %d messages (%v), want 8", len(all), err)
	}
	if c := contents(t, got.raws); got.err != nil || !slices.Equal(c, contentsOf(all[1:])) || got.next != 8 {
		t.Fatalf("followed from 1: %v, next %d, %v; want %v, next 8", c, got.next, got.err, contentsOf(all[1:]))
	}

	// A room closed by its record, with nothing appended, ends a follower.
	second := newPhase(t, st, tk, 8)
	sent := appendN(t, st, second, 0, 1)
	first, done = follow(context.Background(), st, second, 0)
	<-first
	if _, err := st.UpdatePhase(tk.ID, second.ID, func(p *state.Phase) { p.Status, p.CloseReason = state.PhaseClosed, state.CloseEnded }); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got.err != nil || !slices.Equal(contents(t, got.raws), contentsOf(sent)) || got.next != 1 {
		t.Fatalf("followed a room closed by its record: %v, next %d, %v", contents(t, got.raws), got.next, got.err)
	}

	// A follower of an open room ends with its context.
	third := newPhase(t, st, tk, 8)
	appendN(t, st, third, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	first, done = follow(ctx, st, third, 0)
	<-first
	cancel()
	if got := <-done; !errors.Is(got.err, context.Canceled) || len(got.raws) != 1 {
		t.Fatalf("after its context ended: %d messages, %v", len(got.raws), got.err)
	}
}

// LastMessages is Messages' tail and MessageCount.
func testRoomLastMessages(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 10)
	sent := appendN(t, st, ph, 0, 5)
	for _, n := range []int{0, 2, 5, 10} {
		msgs, count, err := st.LastMessages(tk.ID, ph.ID, n)
		want := contentsOf(sent[max(len(sent)-n, 0):])
		if err != nil || count != 5 || !slices.Equal(contentsOf(msgs), want) {
			t.Fatalf("last %d: %v, count %d, %v; want %v, count 5", n, contentsOf(msgs), count, err, want)
		}
	}
	if msgs, count, err := st.LastMessages(tk.ID, "ph-000000", 3); err != nil || count != 0 || len(msgs) != 0 {
		t.Fatalf("an unknown room: %d messages, count %d, %v", len(msgs), count, err)
	}
}

// A task's phase progress keeps its entries in order, one per phase in a
// row.
func testPhaseProgress(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	_, err := st.PhasesProgress("nope")
	wantErr(t, "progress of a malformed task id", err, state.ErrInvalid, errs.Usage)
	wantErr(t, "progress appended to a malformed task id", st.AppendPhaseProgress("nope", state.PhaseProgress{Phase: "ph-000001"}), state.ErrInvalid, errs.Usage)
	if got, err := st.PhasesProgress(tk.ID); err != nil || len(got) != 0 {
		t.Fatalf("a new task's progress: %v, %v", got, err)
	}
	for _, p := range []state.PhaseProgress{{Phase: "ph-000001", Mark: "a"}, {Phase: "ph-000002", Mark: "a"}, {Phase: "ph-000002", Mark: "b"}, {Phase: "ph-000003", Mark: "a", Allowed: true}} {
		if err := st.AppendPhaseProgress(tk.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	want := []state.PhaseProgress{{Phase: "ph-000001", Mark: "a"}, {Phase: "ph-000002", Mark: "a"}, {Phase: "ph-000003", Mark: "a", Allowed: true}}
	if got, err := st.PhasesProgress(tk.ID); err != nil || !slices.Equal(got, want) {
		t.Fatalf("progress %v, %v; want %v (a phase again in a row is recorded once)", got, err, want)
	}
}

// MailboxEnd is where a reader of what arrives from now on starts.
func testMailboxEnd(t *testing.T, st state.State) {
	const name = "oak_0001"
	_, err := st.MailboxEnd("../x")
	wantErr(t, "end of a malformed name", err, state.ErrInvalid, errs.Usage)
	if end, err := st.MailboxEnd(name); err != nil || end != 0 {
		t.Fatalf("an empty mailbox ends at %d, %v", end, err)
	}
	for i := range 2 {
		if err := st.Post(name, entry{i}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, read := readAll(t, st, name, 0)
	end, err := st.MailboxEnd(name)
	if err != nil || end != read {
		t.Fatalf("end %d, %v; a read from 0 ends at %d", end, err, read)
	}
	if err := st.Post(name, entry{9}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := readAll(t, st, name, end); !slices.Equal(got, []int{9}) {
		t.Fatalf("from the end before a post: %v", got)
	}
}

// A design's working copy is written whole; its run lock has one holder.
func testDesignCopyAndLock(t *testing.T, st state.State) {
	wantErr(t, "copy of an unknown design", st.WriteDesignCopy("ds-000000", "a.go", []byte("x")), state.ErrNotFound, errs.NotFound)
	_, _, err := st.TryLockDesign("ds-000000")
	wantErr(t, "lock of an unknown design", err, state.ErrNotFound, errs.NotFound)
	_, _, err = st.TryLockDesign("nope")
	wantErr(t, "lock of a malformed id", err, state.ErrInvalid, errs.Usage)
	id, err := st.CreateDesign()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := st.WriteDesignCopy(id, "dir/a.go", fmt.Appendf(nil, "copy %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	unlock, ok, err := st.TryLockDesign(id)
	if err != nil || !ok {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	if _, ok, err := st.TryLockDesign(id); err != nil || ok {
		t.Fatalf("second lock while held: %v, %v; want refused", ok, err)
	}
	unlock()
	again, ok, err := st.TryLockDesign(id)
	if err != nil || !ok {
		t.Fatalf("lock after unlock: %v, %v", ok, err)
	}
	again()
}

// WatchAny wakes on a change to any of its scopes, each watch in place
// before the first check (the change is made only after it).
func testWatchAny(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	for i, change := range []func() error{
		func() error { return st.Post("elm_0002", entry{1}) },
		func() error {
			_, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Status = state.TaskDone; return nil })
			return err
		},
	} {
		changed := false
		started := make(chan struct{})
		done := make(chan error, 1)
		var once sync.Once
		go func() {
			done <- state.WatchAny(context.Background(), st, []state.Scope{{Agent: "oak_0001"}, {Agent: "elm_0002"}, {Task: tk.ID}}, func() (bool, error) {
				once.Do(func() { close(started) })
				end, err := st.MailboxEnd("elm_0002")
				x, terr := st.Task(tk.ID)
				if err != nil || terr != nil {
					return false, errors.Join(err, terr)
				}
				changed = (i == 0 && end > 0) || (i == 1 && x.Status == state.TaskDone)
				return changed, nil
			})
		}()
		<-started
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || !changed {
			t.Fatalf("change %d: %v, seen %v", i, err, changed)
		}
	}
}

// ResetHeld leaves a project that reads as new: no task, phase, room,
// progress or request; prompts and designs kept; new tasks taken.
func testReset(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 5)
	appendN(t, st, ph, 0, 2)
	if err := st.AppendPhaseProgress(tk.ID, state.PhaseProgress{Phase: ph.ID, Mark: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRequest(&state.Request{From: "oak_0001", Question: "?", Status: state.RequestPending, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePrompt("keeper", []byte("# kept\n")); err != nil {
		t.Fatal(err)
	}
	design, err := st.CreateDesign()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WithTasks(st.ResetHeld); err != nil {
		t.Fatal(err)
	}
	if all, err := st.Tasks(); err != nil || len(all) != 0 {
		t.Fatalf("tasks after a reset: %v, %v", all, err)
	}
	if live, counts, err := st.CountTasks(true); err != nil || len(live) != 0 || counts[state.TaskActive] != 0 {
		t.Fatalf("counts after a reset: %v, %v, %v", live, counts, err)
	}
	_, err = st.Phase(tk.ID, ph.ID)
	wantErr(t, "the old phase", err, state.ErrNotFound, errs.NotFound)
	if n, err := st.MessageCount(tk.ID, ph.ID); err != nil || n != 0 {
		t.Fatalf("the old room counts %d, %v", n, err)
	}
	if raws, _ := readRoom(t, st, tk.ID, ph.ID, 0); len(raws) != 0 {
		t.Fatalf("the old room reads %d messages", len(raws))
	}
	if p, err := st.PhasesProgress(tk.ID); err != nil || len(p) != 0 {
		t.Fatalf("progress after a reset: %v, %v", p, err)
	}
	if rs, err := st.Requests(); err != nil || len(rs) != 0 {
		t.Fatalf("requests after a reset: %v, %v", rs, err)
	}
	if wheres, _ := promptFiles(t, st, ""); len(wheres) != 1 {
		t.Fatalf("prompts after a reset: %v", wheres)
	}
	if list, err := st.DesignIDs(); err != nil || !slices.Contains(list, design) {
		t.Fatalf("designs after a reset: %v, %v", list, err)
	}
	again := newTask(t, st, 2, nil)
	if all, err := st.Tasks(); err != nil || len(all) != 1 || all[0].ID != again.ID {
		t.Fatalf("a task after the reset: %v, %v", all, err)
	}
	second := newPhase(t, st, again, 5)
	if sent := appendN(t, st, second, 0, 1); len(sent) != 1 {
		t.Fatal("no message")
	}
}

// IDsWithPrefix lists the ids of tasks and requests that start with a
// prefix, sorted, and CompleteID resolves a unique prefix through it: the
// same on every backend, so a typed prefix names its task on every
// machine of a hub project. A reset leaves none.
func testIDsWithPrefix(t *testing.T, st state.State) {
	a, b := newTask(t, st, 1, nil), newTask(t, st, 2, nil)
	r := &state.Request{From: "oak_0001", Question: "?", Status: state.RequestPending, CreatedAt: at(1)}
	if err := st.CreateRequest(r); err != nil {
		t.Fatal(err)
	}
	want := []string{a.ID, b.ID}
	slices.Sort(want)
	for _, c := range []struct {
		kind, prefix string
		want         []string
	}{
		{ids.Task, "tk-", want},
		{ids.Task, a.ID, []string{a.ID}},
		{ids.Request, "rq-", []string{r.ID}},
		{ids.Request, "tk-", nil},
		{ids.Phase, "ph-", nil},
	} {
		got, err := st.IDsWithPrefix(c.kind, c.prefix)
		if err != nil || !slices.Equal(got, c.want) {
			t.Fatalf("IDsWithPrefix(%s, %s) = %v, %v; want %v", c.kind, c.prefix, got, err, c.want)
		}
	}
	// The shortest prefix of a that b does not share names a alone.
	n := len("tk-") + 1
	for strings.HasPrefix(b.ID, a.ID[:n]) {
		n++
	}
	if got, err := state.CompleteID(st, ids.Task, a.ID[:n]); err != nil || got != a.ID {
		t.Fatalf("CompleteID(%s) = %q, %v; want %s", a.ID[:n], got, err, a.ID)
	}
	if got, err := state.CompleteID(st, ids.Request, r.ID[:4]); err != nil || got != r.ID {
		t.Fatalf("CompleteID(%s) = %q, %v; want %s", r.ID[:4], got, err, r.ID)
	}
	if a.ID[:4] == b.ID[:4] {
		if _, err := state.CompleteID(st, ids.Task, a.ID[:4]); errs.CodeOf(err) != errs.Usage {
			t.Fatalf("an ambiguous prefix: %v, want a usage error", err)
		}
	}
	if err := st.WithTasks(st.ResetHeld); err != nil {
		t.Fatal(err)
	}
	if got, err := st.IDsWithPrefix(ids.Task, "tk-"); err != nil || len(got) != 0 {
		t.Fatalf("task ids after a reset: %v, %v", got, err)
	}
	if _, err := state.CompleteID(st, ids.Task, a.ID[:n]); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a prefix after a reset: %v, want not found", err)
	}
}
