package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// peekLimit is how much of an MCP request body is read to learn what it
// asks. Every cheap request (initialize, the lists, get_incident) is far
// smaller; a larger body is treated as expensive without being parsed.
const peekLimit = 64 << 10

// rpcCall is what admission needs to know of an MCP request.
type rpcCall struct {
	known  bool // the body was read and parsed as one JSON-RPC message
	id     json.RawMessage
	method string
	tool   string // params.name of tools/call
}

// cheapMethods are the MCP requests answered from memory at once: they
// never wait behind searches.
var cheapMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "resources/list": true, "resources/templates/list": true,
	"prompts/list": true, "resources/read": true, // a case by its URI
	"logging/setLevel": true,
}

// cheapTools are the tools that read one case or the vocabulary, not the
// index.
var cheapTools = map[string]bool{"get_incident": true, "vocab": true}

// cheap reports whether the request costs no search. A request that could
// not be read is not cheap.
func (c rpcCall) cheap() bool {
	if !c.known {
		return false
	}
	switch {
	case cheapMethods[c.method], strings.HasPrefix(c.method, "notifications/"):
		return true
	case c.method == "tools/call":
		return cheapTools[c.tool]
	}
	return false
}

// peekRPC reads the start of an MCP POST's body and puts it back, so that
// the handler reads the body whole.
func peekRPC(r *http.Request) rpcCall {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return rpcCall{}
	}
	buf := make([]byte, peekLimit)
	n, err := io.ReadFull(r.Body, buf)
	head := buf[:n]
	orig := r.Body
	if err != io.EOF && err != io.ErrUnexpectedEOF {
		// More follows (or the read failed): hand on what was read and
		// the rest, unparsed.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(head), orig), orig}
		return rpcCall{}
	}
	r.Body = readCloser{bytes.NewReader(head), orig}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(head, &m) != nil {
		return rpcCall{}
	}
	return rpcCall{known: true, id: m.ID, method: m.Method, tool: m.Params.Name}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// refuseCall answers an MCP request that admission turned away. A tool
// call gets a tool result with isError and a retry hint, which a model
// reads and acts on (an HTTP error would reach the client library as a
// transport failure); any other request gets a JSON-RPC error with its
// id. Both with Retry-After.
func refuseCall(w http.ResponseWriter, c rpcCall) {
	refuseCallWith(w, c, http.StatusServiceUnavailable, retryAfterSeconds,
		"The server is busy with other searches and did not run this call; retry in "+strconv.Itoa(retryAfterSeconds)+" second.")
}

// refuseCallWith answers a refused MCP request with msg: a tool result
// with isError for a tool call, a JSON-RPC error with its id otherwise,
// and status only when the request could not be read (no id to answer).
func refuseCallWith(w http.ResponseWriter, c rpcCall, status, retryAfter int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	retryAfterSeconds := retryAfter
	if !c.known || len(c.id) == 0 || string(c.id) == "null" {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{
			"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32000, "message": msg, "data": map[string]any{"retryAfterSeconds": retryAfterSeconds}},
		})
		return
	}
	var body map[string]any
	if c.method == "tools/call" {
		body = map[string]any{"jsonrpc": "2.0", "id": c.id, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": msg}},
			"isError": true,
		}}
	} else {
		body = map[string]any{"jsonrpc": "2.0", "id": c.id,
			"error": map[string]any{"code": -32000, "message": msg, "data": map[string]any{"retryAfterSeconds": retryAfterSeconds}}}
	}
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(body)
}
