package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/incidentlib/incidentlib/httpx"
)

// knownMethods are the JSON-RPC methods this server answers; a request for
// any other gets "method not found" in JSON-RPC's own shape.
var knownMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"completion/complete": true, "logging/setLevel": true,
}

// rpcShaped makes every refusal of a POST a JSON-RPC error body, so that an
// MCP client shows its message: a body over the size limit (declared or
// chunked), a body that is not JSON, a batch, an unknown method. It reads
// the body (bounded) before the protocol handler does, and hands it on.
func rpcShaped(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(&textErrorRewriter{ResponseWriter: w}, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			if httpx.IsTooLarge(err) {
				rpcError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, "request body over the size limit")
				return
			}
			rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "the request body could not be read")
			return
		}
		trimmed := bytes.TrimSpace(body)
		if !json.Valid(trimmed) {
			rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the request body is not valid JSON")
			return
		}
		if len(trimmed) > 0 && trimmed[0] == '[' {
			rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "batches are not supported: send one JSON-RPC message per request")
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(trimmed, &m) != nil {
			rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request: expected a JSON-RPC object")
			return
		}
		if m.Method != "" && len(m.ID) > 0 && !knownMethods[m.Method] && !strings.HasPrefix(m.Method, "notifications/") {
			rpcError(w, http.StatusOK, m.ID, jsonrpc.CodeMethodNotFound, "method not found: "+truncate(m.Method, 60))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(&textErrorRewriter{ResponseWriter: w}, r)
	})
}

func rpcError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// textErrorRewriter turns a plain-text error from the protocol library
// (which writes its refusals with http.Error) into a JSON-RPC error with a
// fixed message: the library's text names its internals.
type textErrorRewriter struct {
	http.ResponseWriter
	swallow bool
}

func (t *textErrorRewriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(t.Header().Get("Content-Type"), "text/plain") {
		t.swallow = true
		t.Header().Del("Content-Length")
		msg := "the request was refused: " + strings.ToLower(http.StatusText(code))
		rpcError(t.ResponseWriter, code, nil, jsonrpc.CodeInvalidRequest, msg)
		return
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *textErrorRewriter) Write(b []byte) (int, error) {
	if t.swallow {
		return len(b), nil
	}
	return t.ResponseWriter.Write(b)
}

func (t *textErrorRewriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok && !t.swallow {
		f.Flush()
	}
}

func (t *textErrorRewriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
