package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

// reader returns the input the protocol reads.
func (p *drainingPipe) reader(ctx context.Context, in io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if isRequest(line) {
				p.mu.Lock()
				p.asked++
				p.mu.Unlock()
			}
			if _, err := pw.Write(append(bytes.Clone(line), '\n')); err != nil {
				return
			}
		}
		p.wait(ctx)
		if err := sc.Err(); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.Close()
	}()
	return pr
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
	return &countingWriter{p: p, out: out}
}

type countingWriter struct {
	p   *drainingPipe
	out io.Writer
	buf []byte
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.out.Write(b)
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
