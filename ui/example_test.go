package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/ui"
)

// ExampleNew serves the audit UI over a store and asks its API for the
// cache report of a session.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "ui-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")

	// A session written by the real loop against a scripted model.
	w, _ := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	sc, _ := scenario.Parse([]byte(`{"system":"Be brief.","turns":[
		{"prompt":"hello","replies":[[{"type":"text","text":"hi"}]]},
		{"prompt":"again","replies":[[{"type":"text","text":"hi again"}]]}]}`))
	scenario.Run(context.Background(), w, sc, scenario.Options{Session: "s1", Now: func() float64 { return 0 }})
	w.Close()

	// The UI only reads: open the store read-only.
	st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	srv, err := ui.New(st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(srv) // logtool serve listens on 127.0.0.1:8080
	defer ts.Close()

	res, err := http.Get(ts.URL + "/api/sessions/s1/cache")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Print(string(body))
	// Output:
	// {"rows":[{"turn":1,"step":1,"stepStartSeq":2,"bytes":69,"reusable":0,"resent":69,"reason":"first"},{"turn":2,"step":1,"stepStartSeq":15,"bytes":245,"reusable":69,"resent":176,"reason":"none"}],"total":{"requests":2,"bytes":314,"reusable":69,"resent":245}}
}
