package state

// A room append carried by a host's lease (issue 24): the one typed path
// from an agent's call to the write the hub must refuse once another
// host took the agent's lease. The host hands its lease (AgentLease) to
// the commands its agent sends it (agent.Commands) or to its model loop
// (agent.LLMFunc, capability.Env.Fence), the call's session carries it
// (ops.Session.Fence), and phase.SayFenced appends with it
// (AppendFenced). A person's call carries none and appends as ever.

// FencedRoomTx is a RoomTx whose backend can make an append conditional
// on an agent's lease in the store itself (a hub's rooms stream that
// takes atomic batches: natsstate).
type FencedRoomTx interface {
	// AppendFenced is Append with fence's mark stored with the message,
	// all or nothing: refused (ErrLeaseLost, nothing written) once a
	// newer holder took the lease, whatever the host's clock says. A room
	// that moved on meanwhile is retried as Append retries it.
	AppendFenced(m Message, fence AgentLease) error
}

// AppendFenced appends m in tx carried by fence, the lease of the host
// whose agent's call this is (nil: no host, a person's call). Where the
// backend cannot carry it (the files: one machine; a hub project whose
// rooms stream was made before, which keeps the two-step write: the
// host's fence mark before the call, then the plain append) it is
// Append, as is a nil fence.
func AppendFenced(tx RoomTx, m Message, fence AgentLease) error {
	if f, ok := tx.(FencedRoomTx); ok && fence != nil {
		return f.AppendFenced(m, fence)
	}
	return tx.Append(m)
}
