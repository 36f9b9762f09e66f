package stress

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/loop"
)

// store is what these tests use of a store, whichever backend: the Store
// contract, the raw readers verify and the checks need, and the group
// commit's counters. *boltlog.Log and *pglog.Store are both one.
type store interface {
	eventlog.Store
	HeaderRecord(ctx context.Context, session string) ([]byte, error)
	Records(ctx context.Context, session string, from int64, fn func(seq int64, rec []byte) error) error
	SessionIDs(ctx context.Context) ([]string, error)
	CommitStats() (transactions, writes int64)
}

// openTarget opens the store at target: a PostgreSQL database when it is
// a postgres:// URL, else a bbolt file.
func openTarget(target string, opts *eventlog.Options, bopts *boltlog.Options) (store, error) {
	if pglog.IsURL(target) {
		return pglog.Open(context.Background(), target, opts, &pglog.Options{ConnectTimeout: 30 * time.Second})
	}
	if bopts == nil {
		bopts = storeBoltOptions()
	}
	return boltlog.Open(target, opts, bopts)
}

// readSession returns the session's events from seq from on.
func readSession(ctx context.Context, st store, id string, from int64) ([]codec.Event, error) {
	it, err := st.Scan(ctx, id, from)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var evs []codec.Event
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
}

func envInt(t testing.TB, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func sortedKeys(m map[int64]string) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func types(evs []codec.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = evs[i].Type
	}
	return out
}

func typeCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// openOrCreate opens a loop instance over session id, creating the
// session first when the store has none.
func openOrCreate(ctx context.Context, store loop.Store, id string, o loop.Options) (*loop.Loop, error) {
	l, err := loop.Open(ctx, store, id, o)
	if errors.Is(err, eventlog.ErrNotFound) {
		return loop.Create(ctx, store, id, o)
	}
	return l, err
}
