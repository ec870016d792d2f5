package benchmark

import (
	"bytes"
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	var out, log bytes.Buffer
	code := Main(context.Background(), []string{"--sizes", "200", "--queries", "20", "--data", t.TempDir()}, &out, &log)
	t.Log(log.String())
	t.Log(out.String())
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
}
