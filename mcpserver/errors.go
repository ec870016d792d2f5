package mcpserver

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/incidentlib/incidentlib"
)

// toolError is a tool's answer to bad input: the SDK returns it to the model
// as a tool result with isError set, never as a protocol error, so that the
// model reads the message and can correct its call.
type toolError struct{ msg string }

func (e toolError) Error() string { return e.msg }

// message is the one place a library error becomes text for a model. Input
// errors keep their message, which names the parameter and what is valid;
// anything else is logged in full and shown only as a fixed sentence.
func (h *handlers) message(err error) string {
	if incidentlib.ErrorCode(err) == incidentlib.EINTERNAL {
		h.log.Error("mcp: internal error", "err", err)
	}
	var e *incidentlib.Error
	if errors.As(err, &e) {
		if arg, ok := argNames[e.Param]; ok {
			// The library names the JSON API's parameters; a model knows
			// the tools' arguments.
			return arg + ": " + e.Message
		}
	}
	return incidentlib.ErrorMessage(err)
}

// argNames maps the library's parameter names to the tools' argument names
// where they differ.
var argNames = map[string]string{
	"q":        "query",
	"page":     "cursor",
	"per_page": "limit",
}

// toolErr maps a library error to a tool error.
func (h *handlers) toolErr(err error) error { return toolError{h.message(err)} }

// rpcErr maps a library error to a JSON-RPC error, for the methods that have
// no isError result (prompts/get, resources/read).
func (h *handlers) rpcErr(err error) error {
	code := int64(jsonrpc.CodeInvalidParams)
	if incidentlib.ErrorCode(err) == incidentlib.EINTERNAL {
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: h.message(err)}
}
