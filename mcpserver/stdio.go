package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// stdioDrainTimeout bounds how long the server keeps answering requests
// after its input closed.
const stdioDrainTimeout = 30 * time.Second

// drainingPipe sits between standard input and the protocol: it hands the
// input on line by line, counting requests (messages with an id and a
// method), and counts the answers written back. When the input ends it
// holds the end back until every request read has been answered (or ctx
// is done, or stdioDrainTimeout passed), so that a client that writes its
// requests and closes its end (`printf '…' | incidentlib mcp`) gets every
// answer before the server exits.
type drainingPipe struct {
	// outMu serialises writes to out: the protocol's answers and the
	// errors for lines it never saw.
	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	cond     *sync.Cond
	asked    int
	answered int
}

func newDrainingPipe() *drainingPipe {
	p := &drainingPipe{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func isRequest(line []byte) bool {
	var m message
	return json.Unmarshal(line, &m) == nil && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

func isResponse(line []byte) bool {
	var m message
	return json.Unmarshal(line, &m) == nil && m.Method == "" && len(m.ID) > 0
}

// Limits on one line of standard input: a longer line, or one nested
// deeper, is answered with an error without being parsed.
const (
	maxStdioLine  = 16 << 20
	maxStdioDepth = 64
)

// reader returns the input the protocol reads. Each line is checked
// first: one that is not a single JSON-RPC message (not JSON, a batch,
// nested too deep, too long) is answered here with a JSON-RPC error and
// not handed on, so that the session goes on.
func (p *drainingPipe) reader(ctx context.Context, in io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		var err error
		for {
			var line []byte
			var tooLong bool
			line, tooLong, err = readLine(br, maxStdioLine)
			if tooLong {
				p.reject(nil, jsonrpcInvalidRequest, fmt.Sprintf("line over %d bytes; send one JSON-RPC message per line", maxStdioLine))
			} else if line = bytes.TrimSpace(line); len(line) > 0 {
				if id, code, why := checkLine(line); why != "" {
					p.reject(id, code, why)
				} else {
					if isRequest(line) {
						p.mu.Lock()
						p.asked++
						p.mu.Unlock()
					}
					if _, werr := pw.Write(append(bytes.Clone(line), '\n')); werr != nil {
						return
					}
				}
			}
			if err != nil {
				break
			}
		}
		p.wait(ctx)
		if err != io.EOF {
			pw.CloseWithError(err)
			return
		}
		pw.Close()
	}()
	return pr
}

// readLine reads one line (without its newline). A line over max bytes is
// skipped to its end and reported as tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, e := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch e {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
		default:
			return line, tooLong, e
		}
	}
}

const (
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
)

// checkLine tells whether line is one JSON-RPC message the protocol can
// take; if not, it returns the error code, the reason and, when it could
// be read, the message's id.
func checkLine(line []byte) (id json.RawMessage, code int, why string) {
	if d := jsonDepth(line); d > maxStdioDepth {
		return shallowID(line), jsonrpcInvalidRequest, fmt.Sprintf("JSON nested %d deep; at most %d levels are accepted", min(d, 1000), maxStdioDepth)
	}
	if !json.Valid(line) {
		return nil, jsonrpcParseError, "not JSON: send one JSON-RPC message per line"
	}
	switch line[0] {
	case '[':
		return nil, jsonrpcInvalidRequest, "batches are not supported: send one JSON-RPC message per line"
	case '{':
	default:
		return nil, jsonrpcInvalidRequest, "a JSON-RPC message is a JSON object"
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return shallowID(line), jsonrpcInvalidRequest, "not a JSON-RPC message: jsonrpc, id and method have the wrong types"
	}
	switch {
	case m.JSONRPC != "2.0":
		return m.ID, jsonrpcInvalidRequest, `not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"`
	case m.Method == nil && m.Result == nil && m.Error == nil:
		return m.ID, jsonrpcInvalidRequest, `a JSON-RPC message needs a "method" (or, as an answer, a "result" or an "error")`
	case len(m.ID) > 0 && m.ID[0] != '"' && (m.ID[0] < '0' || m.ID[0] > '9') && m.ID[0] != '-' && string(m.ID) != "null":
		return nil, jsonrpcInvalidRequest, `"id" must be a string or a number`
	}
	return nil, 0, ""
}

// jsonDepth is how deeply line nests arrays and objects (strings skipped).
func jsonDepth(line []byte) int {
	depth, most, inString, escaped := 0, 0, false, false
	for _, c := range line {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}

// shallowID reads the top-level "id" of an object without parsing the
// other values (which may be too deep to parse), or nil.
func shallowID(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		if k == "id" {
			var id json.RawMessage
			if t, err := dec.Token(); err == nil {
				switch v := t.(type) {
				case string:
					id, _ = json.Marshal(v)
				case float64:
					id, _ = json.Marshal(v)
				}
			}
			return id
		}
		// Skip the value, however deep, without recursion.
		depth := 0
		for {
			t, err := dec.Token()
			if err != nil {
				return nil
			}
			switch t {
			case json.Delim('['), json.Delim('{'):
				depth++
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
	return nil
}

// reject writes a JSON-RPC error answering a line that was not handed on.
// It is not counted as an answer: the line was not counted as a request.
func (p *drainingPipe) reject(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.out != nil {
		p.out.Write(append(b, '\n'))
	}
}

// wait blocks until every request read has been answered, ctx is done or
// the drain timeout passed.
func (p *drainingPipe) wait(ctx context.Context) {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer stop()
	timer := time.AfterFunc(stdioDrainTimeout, func() { close(done); p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.answered < p.asked && ctx.Err() == nil {
		select {
		case <-done:
			return
		default:
		}
		p.cond.Wait()
	}
}

// writer returns the output the protocol writes, counting answers.
func (p *drainingPipe) writer(out io.Writer) io.WriteCloser {
	p.outMu.Lock()
	p.out = out
	p.outMu.Unlock()
	return &countingWriter{p: p, out: out}
}

type countingWriter struct {
	p   *drainingPipe
	out io.Writer
	buf []byte
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.p.outMu.Lock()
	n, err := w.out.Write(b)
	w.p.outMu.Unlock()
	w.buf = append(w.buf, b[:n]...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if isResponse(w.buf[:i]) {
			w.p.mu.Lock()
			w.p.answered++
			w.p.cond.Broadcast()
			w.p.mu.Unlock()
		}
		w.buf = w.buf[i+1:]
	}
	return n, err
}

func (w *countingWriter) Close() error { return nil }
