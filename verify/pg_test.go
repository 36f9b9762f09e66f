package verify_test

import (
	"context"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// TestPostgresDamage: verify checks the same things on PostgreSQL as on
// bbolt. A session written by the loop verifies clean, digests included;
// then damage made in the database itself (a flipped byte in a record, a
// missing row, a head whose chain hash was rewritten) is a corrupt finding
// at its seq.
func TestPostgresDamage(t *testing.T) {
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	s, err := pglog.Open(ctx, u, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runScenario(t, s, demo, "root")
	res := mustVerify(t, s, "root", verify.Options{Strict: true})
	if len(res.Findings) != 0 || res.Steps != 3 || res.Digests != 3 {
		t.Fatalf("clean session: %+v", res)
	}
	tests := []struct {
		name, damage, repair string
		seq                  int64
	}{
		{"flipped byte", `UPDATE sessionlog_events SET rec = set_byte(rec, length(rec)/2, get_byte(rec, length(rec)/2) # 64) WHERE session = 'root' AND seq = 5`,
			`UPDATE sessionlog_events SET rec = set_byte(rec, length(rec)/2, get_byte(rec, length(rec)/2) # 64) WHERE session = 'root' AND seq = 5`, 5},
		{"missing row", `CREATE TABLE saved AS SELECT * FROM sessionlog_events WHERE session = 'root' AND seq = 7;
			DELETE FROM sessionlog_events WHERE session = 'root' AND seq = 7`,
			`INSERT INTO sessionlog_events SELECT * FROM saved; DROP TABLE saved`, 7},
		{"rewritten chain", `UPDATE sessionlog_sessions SET chain = sha256(chain) WHERE id = 'root'`,
			`UPDATE sessionlog_sessions SET chain = (SELECT chain FROM chain_saved); DROP TABLE chain_saved`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.seq < 0 {
				pgtest.Exec(t, u, `CREATE TABLE chain_saved AS SELECT chain FROM sessionlog_sessions WHERE id = 'root'`)
			}
			pgtest.Exec(t, u, tt.damage)
			res := mustVerify(t, s, "root", verify.Options{})
			if !res.Failed() {
				t.Fatal("damage went unnoticed")
			}
			f := res.Findings[0]
			if f.Kind != verify.Corrupt || (tt.seq >= 0 && f.Seq != tt.seq) {
				t.Fatalf("first finding %v, want corrupt at seq %d", f, tt.seq)
			}
			pgtest.Exec(t, u, tt.repair)
			if res := mustVerify(t, s, "root", verify.Options{}); res.Failed() {
				t.Fatalf("after repair: %v", res.Findings)
			}
		})
	}
}
