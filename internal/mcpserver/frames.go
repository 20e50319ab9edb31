package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one JSON-RPC line over stdio.
const maxFrame = 4 << 20

// StdioTransport is the MCP stdio transport over in and out, with one
// addition to the SDK's: a line that is not a JSON-RPC message (not JSON, or
// JSON without "jsonrpc") is answered with a JSON-RPC error (-32700 parse
// error, -32600 invalid request) and skipped, so one bad frame does not end
// the session (the SDK's own reader closes the connection on it); so is a
// JSON-RPC batch after a handshake in a version without batches.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go filterFrames(in, pw, w)
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// lockedWriter serialises the SDK's writes (one whole line per Write) with
// the filter's error replies.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil } // the process's stdout stays open

func filterFrames(in io.Reader, pass *io.PipeWriter, reply io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxFrame)
	batches := true // until a handshake says otherwise, as the SDK assumes
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if code, msg := checkFrame(line, batches); code != 0 {
			_, _ = reply.Write(errorFrame(code, msg))
			continue
		}
		if v, ok := initializeVersion(line); ok {
			batches = batchVersions[v]
		}
		if _, err := pass.Write(append(line, '\n')); err != nil {
			return
		}
	}
	pass.CloseWithError(sc.Err()) // nil: a clean EOF
}

// batchVersions are the protocol versions with JSON-RPC batches: the SDK
// reads them there, and ends the session on one in any other version
// (2025-06-18 removed them, and a version it does not know negotiates its
// latest).
var batchVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// initializeVersion returns the protocolVersion of an initialize request.
func initializeVersion(line []byte) (string, bool) {
	if line[0] != '{' || !bytes.Contains(line, []byte(`"initialize"`)) {
		return "", false
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method != "initialize" {
		return "", false
	}
	return req.Params.ProtocolVersion, true
}

// checkFrame returns a JSON-RPC error code for a line the SDK cannot read
// (or would end the session on), or 0.
func checkFrame(line []byte, batches bool) (int, string) {
	if !json.Valid(line) {
		return -32700, "Parse error: not JSON"
	}
	if line[0] == '[' {
		if batches {
			return 0, "" // the SDK answers a batch in the versions that have them
		}
		return -32600, "Invalid Request: JSON-RPC batches are not part of the negotiated protocol version (2025-06-18 removed them); send one message per line"
	}
	var head struct {
		JSONRPC string `json:"jsonrpc"`
	}
	if json.Unmarshal(line, &head) != nil || head.JSONRPC != "2.0" {
		return -32600, `Invalid Request: not a JSON-RPC 2.0 message (want an object with "jsonrpc":"2.0")`
	}
	return 0, ""
}

func errorFrame(code int, msg string) []byte {
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	return append(data, '\n')
}
