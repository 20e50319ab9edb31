package natsx

import (
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
)

// Names are the buckets, streams and subjects of one project on a hub:
// every one holds the project's name between separators a name cannot
// hold ("_" in a bucket or stream, "." in a subject), so two projects on
// one hub never reach the same one (config.ValidProject).
type Names struct {
	Project      string
	Records      string // key-value bucket of the records
	Locks        string // key-value bucket of the critical sections' leases
	Rooms        string // stream of the rooms
	RoomPrefix   string // a room's subject is RoomPrefix + TASK.PHASE
	Mail         string // stream of the mailboxes
	MailPrefix   string // a mailbox's subject is MailPrefix + NAME
	DesignLog    string // stream of the design logs
	DesignPrefix string // a design log's subject is DesignPrefix + ID
	Bus          string // stream of the bus (natsbus)
	BusSubject   string // its one subject

	Transcripts      string // stream of the agents' transcripts
	TranscriptPrefix string // an agent's transcript's subject is TranscriptPrefix + NAME
	Replies          string // stream of the resident prompt objects' streamed replies
	ReplyPrefix      string // an agent's reply stream's subject is ReplyPrefix + NAME
	Costs            string // stream of the cost ledger
	CostSubject      string // its one subject
	Agents           string // key-value bucket of the agents' leases (one live host each)
	Workers          string // key-value bucket of the registered workers
	Fence            string // stream of the agents' fence marks (lease.Writer)
	FencePrefix      string // an agent's fence subject is FencePrefix + NAME
}

// ProjectNames are project's names, or a usage error for a name that is
// not config.ValidProject's.
func ProjectNames(project string) (Names, error) {
	if !config.ValidProject(project) {
		return Names{}, errs.Usagef("name the project with lower-case letters, digits and dashes (pm config set store.project NAME)",
			"project %q is not a name for a hub", project)
	}
	p := project
	return Names{Project: p,
		Records: "pm_" + p, Locks: "pm_" + p + "_locks",
		Rooms: "PM_ROOMS_" + p, RoomPrefix: "pm." + p + ".room.",
		Mail: "PM_MAIL_" + p, MailPrefix: "pm." + p + ".mail.",
		DesignLog: "PM_DLOG_" + p, DesignPrefix: "pm." + p + ".dlog.",
		Bus: "PM_BUS_" + p, BusSubject: "pm." + p + ".bus",
		Transcripts: "PM_TRANSCRIPT_" + p, TranscriptPrefix: "pm." + p + ".transcript.",
		Replies: "PM_REPLY_" + p, ReplyPrefix: "pm." + p + ".reply.",
		Costs: "PM_COSTS_" + p, CostSubject: "pm." + p + ".costs",
		Agents: "pm_" + p + "_agents", Workers: "pm_" + p + "_workers",
		Fence: "PM_FENCE_" + p, FencePrefix: "pm." + p + ".fence.",
	}, nil
}

// KVStream is the stream that holds key-value bucket.
func KVStream(bucket string) string { return "KV_" + bucket }

// Streams are every stream of the project, its records' first.
func (n Names) Streams() []string {
	return []string{KVStream(n.Records), n.Rooms, n.Mail, n.DesignLog, KVStream(n.Locks), n.Bus,
		n.Transcripts, n.Replies, n.Costs}
}

// A single node started by pm hub says that it syncs every write before
// acknowledging it (no client can ask a server that): the stream
// HubStream, made at its start, has SyncedKey "true" and NodeKey its
// name in its metadata. Durability reads them; a server that is not a pm
// hub has no such stream and is reported as not saying.
const (
	HubStream = "PM_HUB"
	SyncedKey = "pm.sync_always"
	NodeKey   = "pm.node"
)
