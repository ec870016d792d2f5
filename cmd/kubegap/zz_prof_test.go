package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

func BenchmarkZZAudit(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Now: time.Now}
		m.Run(context.Background(), []string{"audit", "/tmp/kube/bench400.yaml", "--format", "json"})
	}
}
