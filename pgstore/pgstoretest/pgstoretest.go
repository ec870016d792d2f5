// Package pgstoretest gives tests a fresh PostgreSQL database, and a way to
// cut it off and bring it back. The tests that need it run only when
// INCIDENTLIB_POSTGRES_TESTS=1 and INCIDENTLIB_TEST_DATABASE_URL names a
// server (scripts/with-postgres.sh starts a throwaway one); otherwise they
// skip, saying so.
package pgstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Database creates an empty database for one test, drops it at the end,
// and returns its connection string.
func Database(t testing.TB) string {
	t.Helper()
	if os.Getenv("INCIDENTLIB_POSTGRES_TESTS") != "1" {
		t.Skip("PostgreSQL tests are off: set INCIDENTLIB_POSTGRES_TESTS=1 and INCIDENTLIB_TEST_DATABASE_URL (scripts/with-postgres.sh starts a server)")
	}
	base := os.Getenv("INCIDENTLIB_TEST_DATABASE_URL")
	if base == "" {
		t.Fatal("INCIDENTLIB_POSTGRES_TESTS=1 but INCIDENTLIB_TEST_DATABASE_URL is empty")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	name := "il_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return WithDatabase(base, name)
}

// WithDatabase returns the connection string with another database name.
func WithDatabase(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return conn + " dbname=" + name // a later key=value wins
}

// Proxy forwards TCP connections on loopback to the database, so a test
// can cut the database off (every connection dropped, new ones refused)
// and bring it back on the same address.
type Proxy struct {
	target func() (net.Conn, error)
	addr   string

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	frozen chan struct{} // closed when thawed; nil while not frozen
}

// NewProxy starts a proxy to the database of conn (a key=value string with
// host= a socket directory, or a URL) and returns it with the connection
// string that goes through it.
func NewProxy(t testing.TB, conn string) (*Proxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		t.Fatal(err)
	}
	host, port := cfg.Host, cfg.Port
	dial := func() (net.Conn, error) {
		if strings.HasPrefix(host, "/") {
			return net.Dial("unix", filepath.Join(host, fmt.Sprintf(".s.PGSQL.%d", port)))
		}
		return net.Dial("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	}
	p := &Proxy{target: dial, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.Thaw(); p.Cut() })
	_, pport, _ := net.SplitHostPort(p.addr)
	via := fmt.Sprintf("host=127.0.0.1 port=%s user=%s dbname=%s sslmode=disable connect_timeout=2", pport, cfg.User, cfg.Database)
	return p, via
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := p.target()
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { p.copy(up, c); up.Close(); c.Close() }()
			go func() { p.copy(c, up); up.Close(); c.Close() }()
		}
	}()
}

// copy forwards bytes, holding them while the proxy is frozen.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.frozen
			p.mu.Unlock()
			if gate != nil {
				<-gate
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Freeze makes the database silent: connections stay open and new ones
// are accepted, but nothing they send is answered until Thaw, as when a
// database host hangs or a network path drops packets.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen == nil {
		p.frozen = make(chan struct{})
	}
}

// Thaw lets the held bytes through.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// Cut drops every connection and stops accepting new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Restore accepts connections again on the same address.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
