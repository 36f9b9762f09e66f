package salvage_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/salvage"
)

// want is the expected line of one session in a report.
type want struct {
	id     string
	lost   bool
	copied int64 // -1: all of the session's events
	end    int64 // -1: all of the session's events
	cause  salvage.Cause
	at     int64
	later  int64 // -1: not checked; -3: every record after at
	head   bool  // HeadErr set
}

// TestInto damages a real store in one way per case, salvages it, and
// checks the report line of every session, that the source file is
// unchanged, and that the new store holds exactly the reported prefixes,
// which verify clean.
func TestInto(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, want map[string][][]byte)
		want   []want // sessions not listed are copied whole
	}{{
		name:   "clean",
		damage: func(*testing.T, string, map[string][][]byte) {},
	}, {
		name: "crc",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			flipInFile(t, path, storedValue(t, path, sessB, seqKey(40), true))
		},
		want: []want{{id: sessB, copied: 40, end: -1, cause: salvage.CRC, at: 40, later: -3}},
	}, {
		name: "header record",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, sessB, func(b, _ *bolt.Bucket) error {
				rec := append([]byte(nil), b.Get([]byte("header"))...)
				rec[len(rec)/2] ^= 1
				return b.Put([]byte("header"), rec)
			})
		},
		want: []want{{id: sessB, lost: true, copied: 0, end: -1, cause: salvage.Header, at: -1, later: -1}},
	}, {
		name: "header record names another session",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, sessB, func(b, _ *bolt.Bucket) error {
				h := codec.NewSessionHeader("intruder", 1, "", "", 0)
				return b.Put([]byte("header"), codec.EncodeRecord(nil, h.Raw))
			})
		},
		want: []want{{id: sessB, lost: true, copied: 0, end: -1, cause: salvage.Header, at: -1, later: -1}},
	}, {
		name: "head record",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, sessB, func(b, _ *bolt.Bucket) error {
				rec := append([]byte(nil), b.Get([]byte("head"))...)
				rec[len(rec)/2] ^= 1
				return b.Put([]byte("head"), rec)
			})
		},
		want: []want{{id: sessB, copied: -1, end: -1, cause: salvage.None, at: -1, later: 0, head: true}},
	}, {
		name: "missing record",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, sessB, func(_, ev *bolt.Bucket) error { return ev.Delete(seqKey(30)) })
		},
		want: []want{{id: sessB, copied: 30, end: -1, cause: salvage.Gap, at: 30, later: -3}},
	}, {
		name: "records swapped",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, sessB, func(_, ev *bolt.Bucket) error {
				a, b := append([]byte(nil), ev.Get(seqKey(20))...), append([]byte(nil), ev.Get(seqKey(21))...)
				if err := ev.Put(seqKey(20), b); err != nil {
					return err
				}
				return ev.Put(seqKey(21), a)
			})
		},
		want: []want{{id: sessB, copied: 20, end: -1, cause: salvage.Key, at: 20, later: -3}},
	}, {
		name: "fold rule",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			// An event that passes its CRC and decodes, but replaces a seq
			// that is not on the surface (seq 0 is a turn/start): a
			// writer's bug, not bit rot.
			line := `{"type":"user/message","seq":50,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}`
			ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			rewrite(t, path, sessB, func(_, evs *bolt.Bucket) error {
				return evs.Put(seqKey(50), codec.EncodeRecord(nil, ev.Raw))
			})
		},
		want: []want{{id: sessB, copied: 50, end: -1, cause: salvage.Fold, at: 50, later: -3}},
	}, {
		name: "tail records missing",
		damage: func(t *testing.T, path string, want map[string][][]byte) {
			rewrite(t, path, sessB, func(_, ev *bolt.Bucket) error {
				for seq := int64(80); seq < int64(len(want[sessB])); seq++ {
					if err := ev.Delete(seqKey(seq)); err != nil {
						return err
					}
				}
				return nil
			})
		},
		want: []want{{id: sessB, copied: 80, end: -1, cause: salvage.Missing, at: 80, later: 0}},
	}, {
		name: "record past the head",
		damage: func(t *testing.T, path string, want map[string][][]byte) {
			n := int64(len(want[sessB]))
			rewrite(t, path, sessB, func(_, ev *bolt.Bucket) error {
				return ev.Put(seqKey(n), append([]byte(nil), ev.Get(seqKey(n-1))...))
			})
		},
		want: []want{{id: sessB, copied: -1, end: -1, cause: salvage.Extra, at: -2, later: -1}},
	}, {
		name: "chain hash",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			// A record rewritten with a valid CRC (a buggy writer): only
			// the chain hash of the head tells.
			rewrite(t, path, sessB, func(_, ev *bolt.Bucket) error {
				rec := reencode(t, ev.Get(seqKey(3)), func(p []byte) []byte {
					// The time of the event (1003, a msgpack uint16): its
					// low byte, rewritten in place.
					i := strings.Index(string(p), "\xa4time\xcd")
					p[i+7] ^= 1
					return p
				})
				return ev.Put(seqKey(3), rec)
			})
		},
		want: []want{{id: sessB, copied: -1, end: -1, cause: salvage.Chain, at: -1, later: 0}},
	}, {
		name: "two sessions damaged, the child's inherited record",
		damage: func(t *testing.T, path string, _ map[string][][]byte) {
			rewrite(t, path, child, func(_, ev *bolt.Bucket) error {
				rec := append([]byte(nil), ev.Get(seqKey(7))...)
				rec[len(rec)-1] ^= 0x80
				return ev.Put(seqKey(7), rec)
			})
			rewrite(t, path, sessA, func(_, ev *bolt.Bucket) error { return ev.Delete(seqKey(0)) })
		},
		want: []want{
			{id: sessA, copied: 0, end: -1, cause: salvage.Gap, at: 0, later: -3},
			{id: child, copied: 7, end: -1, cause: salvage.CRC, at: 7, later: -3},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, orig := buildStore(t)
			tt.damage(t, path, orig)
			before := fileSum(t, path)
			out := filepath.Join(t.TempDir(), "new.db")
			src := openRead(t, path)
			rep, err := salvage.Into(context.Background(), src, out, &salvage.Options{NoSync: true})
			if err != nil {
				t.Fatalf("Into = %v", err)
			}
			if fileSum(t, path) != before {
				t.Fatal("salvage changed the damaged store")
			}
			checkReport(t, rep, tt.want, orig)
			checkCopy(t, out, rep, src)
			// Before the damage, the copy is the original.
			for _, s := range rep.Sessions {
				if s.Cause != salvage.Chain && !s.Lost {
					if got := payloads(t, openRead(t, out), s.ID); !equalPrefix(got, orig[s.ID]) {
						t.Errorf("session %s: the copy is not a prefix of the original", s.ID)
					}
				}
			}
		})
	}
}

// checkReport checks every session's line of rep: those in wants as
// described, the others copied whole.
func checkReport(t *testing.T, rep salvage.Report, wants []want, orig map[string][][]byte) {
	t.Helper()
	if len(rep.Sessions) != len(orig) {
		t.Fatalf("report of %d sessions, want %d: %v", len(rep.Sessions), len(orig), rep.Sessions)
	}
	damaged := false
	for _, s := range rep.Sessions {
		n := int64(len(orig[s.ID]))
		w := want{id: s.ID, copied: n, end: n, at: -1, later: 0}
		for _, x := range wants {
			if x.id == s.ID {
				w = x
				if w.copied < 0 {
					w.copied = n
				}
				if w.end < 0 {
					w.end = n
				}
				if w.at == -2 {
					w.at = n
				}
				if w.later == -3 {
					w.later = n - w.at - 1
				}
			}
		}
		line := s.String()
		if s.Lost != w.lost || s.Cause != w.cause || s.At != w.at || (s.HeadErr != nil) != w.head ||
			(!w.lost && (s.Copied != w.copied || s.End != w.end)) || (s.Lost && s.End >= 0 && s.End != n) || (w.later >= 0 && s.Later != w.later) {
			t.Errorf("session %s: %s\n(lost %v copied %d end %d cause %s at %d later %d head %v)\nwant %+v",
				s.ID, line, s.Lost, s.Copied, s.End, s.Cause, s.At, s.Later, s.HeadErr, w)
		}
		if (s.Cause != salvage.None) != (s.Err != nil) {
			t.Errorf("session %s: cause %s with error %v", s.ID, s.Cause, s.Err)
		}
		if s.Err != nil && !errors.IsAny(s.Err, salvage.ErrDamaged, eventlog.ErrCorrupt, eventlog.ErrInvalid) {
			t.Errorf("session %s: error %v is not classified", s.ID, s.Err)
		}
		if !s.Whole() {
			damaged = true
			if !strings.Contains(line, s.ID+" ") || !strings.Contains(line, s.Cause.String()) && s.HeadErr == nil {
				t.Errorf("line %q does not name the session and the cause", line)
			}
		}
	}
	if rep.Damaged() != (damaged || rep.List != nil) {
		t.Errorf("Damaged() = %v, want %v", rep.Damaged(), damaged)
	}
	t.Logf("report:\n%s", reportText(rep))
}

func reportText(rep salvage.Report) string {
	var b strings.Builder
	for _, s := range rep.Sessions {
		b.WriteString(s.String() + "\n")
	}
	b.WriteString(rep.Summary())
	return b.String()
}

// TestIntoRefusesExisting: the new store's path must not exist, not even
// as an empty file, and nothing is written then.
func TestIntoRefusesExisting(t *testing.T) {
	path, _ := buildStore(t)
	for _, tt := range []struct {
		name   string
		create func(t *testing.T, out string)
	}{
		{"empty file", func(t *testing.T, out string) {
			if err := os.WriteFile(out, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, out string) {
			if err := os.Mkdir(out, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"the source itself", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "new.db")
			if tt.create != nil {
				tt.create(t, out)
			} else {
				out = path
			}
			before := fileSum(t, path)
			_, err := salvage.Into(context.Background(), openRead(t, path), out, nil)
			if !errors.Is(err, salvage.ErrExists) {
				t.Fatalf("Into(%s) = %v, want ErrExists", tt.name, err)
			}
			if fileSum(t, path) != before {
				t.Fatal("the source changed")
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.create != nil && len(entries) != 1 {
				t.Fatalf("left behind: %v", entries)
			}
		})
	}
}

// TestIntoCancelled: a cancelled copy is an error and leaves nothing.
func TestIntoCancelled(t *testing.T) {
	path, _ := buildStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err := salvage.Into(ctx, openRead(t, path), filepath.Join(dir, "new.db"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Into = %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func equalPrefix(a, b [][]byte) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// faultySource is a Source over a store that fails or panics as a damaged
// one might.
type faultySource struct {
	*boltlog.Log
	// listErr is returned by SessionIDs with the ids; dup lists the first
	// id twice.
	listErr error
	dup     bool
	// panicAt makes Records panic when it reaches that seq of session
	// panicIn, as bbolt does on a malformed page.
	panicIn string
	panicAt int64
	// headerPanic makes HeaderRecord of that session panic.
	headerPanic string
}

func (f *faultySource) SessionIDs(ctx context.Context) ([]string, error) {
	ids, err := f.Log.SessionIDs(ctx)
	if err != nil {
		return nil, err
	}
	if f.dup {
		ids = append(ids[:1:1], ids...)
	}
	if f.listErr != nil {
		return ids[:len(ids)-1], f.listErr
	}
	return ids, nil
}

func (f *faultySource) HeaderRecord(ctx context.Context, id string) ([]byte, error) {
	if id == f.headerPanic {
		var m map[string]int
		m["x"]++ // a nil map write: a runtime panic, as a corrupt page causes
	}
	return f.Log.HeaderRecord(ctx, id)
}

func (f *faultySource) Records(ctx context.Context, id string, from int64, fn func(int64, []byte) error) error {
	return f.Log.Records(ctx, id, from, func(seq int64, rec []byte) error {
		if id == f.panicIn && seq >= f.panicAt {
			panic("page 12: invalid page type: 0: 10")
		}
		return fn(seq, rec)
	})
}

// refusingStore is a Destination that refuses one event of one session
// with ErrInvalid, as a store with stricter rules would.
type refusingStore struct {
	*boltlog.Log
	session string
	seq     int64
}

func (r *refusingStore) Import(ctx context.Context, h codec.SessionHeader, src eventlog.Source) (int64, error) {
	if h.ID != r.session {
		return r.Log.Import(ctx, h, src)
	}
	return r.Log.Import(ctx, h, &refuser{src: src, seq: r.seq})
}

type refuser struct {
	src eventlog.Source
	seq int64
}

func (r *refuser) Next() (codec.Event, error) {
	ev, err := r.src.Next()
	if err == nil && ev.Seq == r.seq {
		return ev, errors.Mark(errors.Newf("salvage_test: seq %d refused", errors.Safe(ev.Seq)), eventlog.ErrInvalid)
	}
	return ev, err
}

// TestCopyFaults: panics and errors of the source are reported as damage
// of what was being read, never a crash; a refusal by the new store keeps
// the refused event and what follows out.
func TestCopyFaults(t *testing.T) {
	path, orig := buildStore(t)
	listErr := errors.Mark(errors.New("salvage_test: the session list is damaged"), eventlog.ErrCorrupt)
	tests := []struct {
		name string
		src  func(l *boltlog.Log) salvage.Source
		dst  func(l *boltlog.Log) salvage.Destination
		want []want
		list bool // Report.List set, the last session not listed
	}{{
		name: "records panic",
		src:  func(l *boltlog.Log) salvage.Source { return &faultySource{Log: l, panicIn: sessA, panicAt: 100} },
		want: []want{{id: sessA, copied: 100, end: -1, cause: salvage.Read, at: 100, later: 0}},
	}, {
		name: "header record panics",
		src:  func(l *boltlog.Log) salvage.Source { return &faultySource{Log: l, headerPanic: sessB} },
		want: []want{{id: sessB, lost: true, cause: salvage.Bucket, at: -1, later: -1}},
	}, {
		name: "list damaged",
		src:  func(l *boltlog.Log) salvage.Source { return &faultySource{Log: l, listErr: listErr} },
		list: true,
	}, {
		name: "id listed twice",
		src:  func(l *boltlog.Log) salvage.Source { return &faultySource{Log: l, dup: true} },
		want: []want{{id: child, copied: -1, end: -1, at: -1}},
	}, {
		name: "new store refuses",
		src:  func(l *boltlog.Log) salvage.Source { return l },
		dst:  func(l *boltlog.Log) salvage.Destination { return &refusingStore{Log: l, session: sessB, seq: 60} },
		want: []want{{id: sessB, copied: 60, end: -1, cause: salvage.Refused, at: 60, later: -3}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new.db")
			dl, err := boltlog.Open(out, writeOptions(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var dst salvage.Destination = dl
			if tt.dst != nil {
				dst = tt.dst(dl)
			}
			src := openRead(t, path)
			rep, err := salvage.Copy(context.Background(), tt.src(src), dst)
			if cerr := dl.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("Copy = %v", err)
			}
			wantOrig := orig
			if tt.list {
				if !errors.Is(rep.List, eventlog.ErrCorrupt) || !rep.Damaged() {
					t.Errorf("List = %v, Damaged() = %v", rep.List, rep.Damaged())
				}
				wantOrig = map[string][][]byte{child: orig[child], sessA: orig[sessA]}
			}
			if tt.name == "id listed twice" {
				if len(rep.Sessions) != 4 || rep.Sessions[1].Cause != salvage.Duplicate || !rep.Sessions[1].Lost {
					t.Fatalf("report %v", rep.Sessions)
				}
				rep.Sessions = append(rep.Sessions[:1], rep.Sessions[2:]...)
			}
			checkReport(t, rep, tt.want, wantOrig)
			checkCopy(t, out, rep, src)
		})
	}
}
