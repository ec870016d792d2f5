package server

import (
	"container/list"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// responseCache keeps whole successful GET responses (status 200, headers
// and body as the protocol handler produced them, compressed or not) for
// repeated requests. The corpus only changes when the library is loaded
// again, and SetReady clears the cache when it is, so entries never go
// stale; the only bound needed is memory, kept by evicting the least
// recently used entries.
//
// A response is stored only if its request missed the cache in the same
// generation (since the last clear): a request that began on the library
// before a change and finished after it is never stored, so a cleared
// cache cannot be refilled with the old library's answers.
type responseCache struct {
	maxBytes, maxEntry int64

	mu    sync.Mutex
	bytes int64
	items map[string]*list.Element // of *cachedResponse
	lru   *list.List               // front: most recently used
	// missed holds the keys that missed since the last clear, whose
	// responses may be stored.
	missed map[string]struct{}

	hits, misses uint64
}

type cachedResponse struct {
	key    string
	header http.Header
	body   []byte
	etag   string
}

func (c *cachedResponse) size() int64 {
	n := int64(len(c.key) + len(c.body) + 64)
	for k, vs := range c.header {
		n += int64(len(k))
		for _, v := range vs {
			n += int64(len(v))
		}
	}
	return n
}

// newResponseCache returns a cache holding at most maxBytes; nil (no
// caching) when maxBytes is 0 or less.
func newResponseCache(maxBytes int64) *responseCache {
	if maxBytes <= 0 {
		return nil
	}
	return &responseCache{
		maxBytes: maxBytes,
		maxEntry: max(maxBytes/16, 1),
		items:    map[string]*list.Element{},
		lru:      list.New(),
		missed:   map[string]struct{}{},
	}
}

func (c *responseCache) get(key string) *cachedResponse {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		c.misses++
		if len(c.missed) >= maxMissed {
			c.missed = map[string]struct{}{} // requests that never stored
		}
		c.missed[key] = struct{}{}
		return nil
	}
	c.hits++
	c.lru.MoveToFront(e)
	return e.Value.(*cachedResponse)
}

func (c *responseCache) put(r *cachedResponse) {
	if c == nil {
		return
	}
	n := r.size()
	if n > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.missed[r.key]; !ok {
		return // its request began before the last clear
	}
	delete(c.missed, r.key)
	if old, ok := c.items[r.key]; ok {
		c.bytes -= old.Value.(*cachedResponse).size()
		c.lru.Remove(old)
	}
	c.items[r.key] = c.lru.PushFront(r)
	c.bytes += n
	for c.bytes > c.maxBytes {
		e := c.lru.Back()
		old := e.Value.(*cachedResponse)
		c.lru.Remove(e)
		delete(c.items, old.key)
		c.bytes -= old.size()
	}
}

// clear drops every entry: the library behind the responses changed.
func (c *responseCache) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = map[string]*list.Element{}
	c.missed = map[string]struct{}{}
	c.lru.Init()
	c.bytes = 0
}

// maxMissed bounds the keys remembered as missed (each a few hundred bytes).
const maxMissed = 1 << 16

func (c *responseCache) stats() (entries int, bytes int64, hits, misses uint64) {
	if c == nil {
		return 0, 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes, c.hits, c.misses
}

// cacheKey is the normalised form of a request: its host and path, its query
// parameters sorted with blank values and surrounding spaces dropped (so
// that ?q=dns&page=1 and ?page=1&q=%20dns share an entry), and the parts
// of the request the response depends on (compression, the Accept header
// the API negotiates on). It reports false for a request not worth a
// key: an unparsable query or an oversized one.
func cacheKey(r *http.Request) (string, bool) {
	if len(r.URL.RawQuery) > 2048 || len(r.Header.Get("Accept")) > 256 {
		return "", false
	}
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", false
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	// The host is part of the key: a handler without a configured base
	// URL builds its links from it.
	b.WriteString(r.Host)
	b.WriteString(r.URL.Path)
	sep := byte('?')
	for _, k := range keys {
		for _, s := range v[k] {
			if k == "q" {
				s = strings.Join(strings.Fields(s), " ")
			} else {
				s = strings.TrimSpace(s)
			}
			b.WriteByte(sep)
			sep = '&'
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(s))
		}
	}
	b.WriteString("\x00")
	if acceptsGzip(r) {
		b.WriteString("gzip")
	}
	b.WriteString("\x00")
	b.WriteString(r.Header.Get("Accept"))
	return b.String(), true
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q = strings.ReplaceAll(strings.TrimSpace(q), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// etagMatches reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func etagMatches(header, etag string) bool {
	if header == "" || etag == "" {
		return false
	}
	if strings.TrimSpace(header) == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == want {
			return true
		}
	}
	return false
}
