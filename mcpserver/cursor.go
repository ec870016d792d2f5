package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/incidentlib/incidentlib"
)

// A cursor names the next page of one particular query. It carries a hash
// of the query so that a cursor passed with different arguments is refused
// rather than silently paging through some other result set.
type cursor struct {
	Version int    `json:"v"`
	Key     string `json:"k"`
	Page    int    `json:"p"`
	PerPage int    `json:"n"`
}

const cursorVersion = 1

// queryKey hashes what defines a result set: the tool and its query without
// the page.
func queryKey(tool string, q any) string {
	b, _ := json.Marshal(q) // plain structs of strings and ints always marshal
	h := fnv.New64a()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

func encodeCursor(key string, page, perPage int) string {
	b, _ := json.Marshal(cursor{Version: cursorVersion, Key: key, Page: page, PerPage: perPage})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the page a cursor names, or an EINVALID error when
// it is malformed or belongs to another query.
func decodeCursor(s, key string) (page, perPage int, err error) {
	bad := func(why string) (int, int, error) {
		return 0, 0, incidentlib.InvalidParam("cursor", "%s; pass next_cursor exactly as the previous call returned it, with the same other arguments, or leave cursor out for the first page", why)
	}
	if len(s) > 200 {
		return bad("not a cursor this server issued")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return bad("not a cursor this server issued")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Version != cursorVersion {
		return bad("not a cursor this server issued")
	}
	if c.Key != key {
		return bad("this cursor belongs to a call with other arguments")
	}
	if c.Page < 1 || c.PerPage < 1 || c.PerPage > maxLimit || c.Page > 100000 {
		return bad("not a cursor this server issued")
	}
	return c.Page, c.PerPage, nil
}
