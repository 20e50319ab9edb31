package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/msglog"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/task"
)

// pingEvery keeps idle websockets alive through proxies and finds dead peers.
const pingEvery = 30 * time.Second

var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 16 << 10,
	// A browser always sends Origin; a page of another site must not
	// read the bus with the human's cookie (cross-site websocket hijacking).
	CheckOrigin: sameOrigin,
}

// events is GET /api/events?cursor=C: a websocket of every bus event after C.
// One message per event: {"type":"event","cursor":NEXT,"event":{...}}, with
// "line" (its message-log line) and "health" (its task's health now) when
// it has them. A
// client that falls MaxQueue events behind gets {"type":"resnapshot",
// "cursor":LAST} and is closed: it should GET /api/state and follow again.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	from, err := bus.ParseCursor(r.URL.Query().Get("cursor"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "cross-origin websocket refused")
		return
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	s.wg.Add(1)
	defer s.wg.Done()
	defer conn.Close()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go discardReads(conn, cancel)
	queue := make(chan frame, s.cfg.MaxQueue)
	go s.follow(ctx, from, queue)
	s.send(ctx, conn, queue, from)
}

// frame is one message for a client, built by the follower.
type frame struct {
	data   []byte
	cursor bus.Cursor
	behind bool // the client fell too far behind: resnapshot
}

// follow reads the bus after from into queue, never waiting for the client:
// when the queue is full the client is too far behind.
func (s *Server) follow(ctx context.Context, from bus.Cursor, queue chan<- frame) {
	defer close(queue)
	lines := s.cascadeAt(from)
	for d, err := range s.sess.Store.Bus().Subscribe(ctx, from) {
		if err != nil {
			return
		}
		f := frame{data: eventFrame(d, lineOf(lines, d.Event), s.healthAt(d)), cursor: d.Next}
		select {
		case queue <- f:
		default:
			if s.cfg.onBehind != nil {
				s.cfg.onBehind()
			}
			select { // waits for the sender to take one more frame
			case queue <- frame{behind: true}:
			case <-ctx.Done():
			}
			return
		}
	}
}

// healthAt is healthOf for one delivery, worked out once for every
// connection that sends it: each open page would otherwise read the task's
// records (and every request) again for the same event.
func (s *Server) healthAt(d bus.Delivery) *task.Health {
	if d.Event.TaskID == "" || !ops.ChangesState(d.Event.Kind) {
		return nil
	}
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if h, ok := s.health.at[d.Next]; ok {
		return h
	}
	h := s.healthOf(d.Event)
	s.health.reads++
	if s.health.at == nil || len(s.health.at) >= healthKept {
		s.health.at = map[bus.Cursor]*task.Health{} // the connections are near the bus's end: start over
	}
	s.health.at[d.Next] = h
	return h
}

// healthKept bounds the health remembered per event.
const healthKept = 256

// healthOf is the current health of the task ev names (healthAt has
// checked that ev may have changed it): the page takes it as is, so
// transitions the server derives from several records (starting → working,
// waiting-children, stalled) show without a snapshot. One task's records are
// read per such event.
func (s *Server) healthOf(ev bus.Event) *task.Health {
	h, err := ops.TaskHealth(s.sess, ev.TaskID)
	if err != nil {
		return nil // a task of a reset state, or a bad id: nothing to show
	}
	return &h
}

// seedEvents bounds how much of the bus before a resume cursor is read to
// rebuild the message log's open calls.
const seedEvents = 1000

// cascadeAt is the message log's cascade as it stood at from: a client that
// resumes there sees a reply to a call made before its reconnect at that
// call's depth, not at the top. Only the last seedEvents events are read (a
// call opened before them is at the top, as for a fresh log).
func (s *Server) cascadeAt(from bus.Cursor) *msglog.Cascade {
	c := msglog.NewCascade()
	before, err := s.sess.Store.Bus().Before(from, seedEvents)
	if err != nil {
		return c // the depths start again, as they did before seeding
	}
	for _, d := range before {
		c.Line(d.Event)
	}
	return c
}

// eventFrame wraps the event's stored line (valid JSON: the bus skips bad
// lines) without encoding it again, with its message-log line, its task's
// health if any, and "changes" when a view must read again after it
// (ops.ChangesView: the page's task detail re-reads /api/task only then).
func eventFrame(d bus.Delivery, line *msglog.Line, health *task.Health) []byte {
	cur, _ := d.Next.MarshalText()
	b := make([]byte, 0, len(d.Raw)+len(cur)+40)
	b = append(b, `{"type":"event","cursor":"`...)
	b = append(b, cur...)
	b = append(b, '"')
	if line != nil {
		lb, _ := json.Marshal(line)
		b = append(b, `,"line":`...)
		b = append(b, lb...)
	}
	if health != nil {
		hb, _ := json.Marshal(health)
		b = append(b, `,"health":`...)
		b = append(b, hb...)
	}
	if ops.ChangesView(d.Event.Kind) {
		b = append(b, `,"changes":true`...)
	}
	b = append(b, `,"event":`...)
	b = append(b, d.Raw...)
	return append(b, '}')
}

// send writes frames until the follower ends, the client goes or the server
// closes. A full queue blocks the follower's overflow frame until send takes
// one more frame, so the overflow notice is the last thing sent.
func (s *Server) send(ctx context.Context, conn *websocket.Conn, queue <-chan frame, last bus.Cursor) {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			s.closeWith(conn, websocket.CloseGoingAway, "server closing")
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.cfg.WriteTimeout)) != nil {
				return
			}
		case f, ok := <-queue:
			if !ok {
				return
			}
			if f.behind {
				s.write(conn, resnapshotFrame(last))
				s.closeWith(conn, websocket.CloseTryAgainLater, "too far behind: resnapshot")
				return
			}
			if s.cfg.beforeWrite != nil {
				s.cfg.beforeWrite()
			}
			if s.write(conn, f.data) != nil {
				return
			}
			last = f.cursor
		}
	}
}

func resnapshotFrame(last bus.Cursor) []byte {
	cur, _ := last.MarshalText()
	return []byte(`{"type":"resnapshot","cursor":"` + string(cur) + `"}`)
}

func (s *Server) write(conn *websocket.Conn, data []byte) error {
	_ = conn.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	return conn.WriteMessage(websocket.TextMessage, data)
}

func (s *Server) closeWith(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// discardReads handles pings, pongs and close frames from the client (the
// protocol needs a reader) and ends the stream when the client goes.
// Clients send nothing else; anything large is a protocol error.
func discardReads(conn *websocket.Conn, cancel context.CancelFunc) {
	defer cancel()
	conn.SetReadLimit(4 << 10)
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}
