package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/wire"
)

// exampleHost answers every step with one model and the wire it is sent
// with.
type exampleHost struct{}

func (exampleHost) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	cfg := header.Config{Provider: "local", HasProvider: true, Model: "m", Wire: wire.OpenAIChat, HasWire: true}
	return loop.StepSpec{System: "Be brief.", Config: cfg}, nil
}

// A loop whose model is an OpenAI-compatible server (here a local stand-in
// that answers "Hello."). The key comes from the variable named in
// APIKeyEnv; the body the server received is the log's replay --wire.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	os.Setenv("EXAMPLE_API_KEY", "sk-example")

	p, err := provider.New(provider.Options{Wire: wire.OpenAIChat, BaseURL: srv.URL, APIKeyEnv: "EXAMPLE_API_KEY"})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store, err := sessionlog.Open(context.Background(), filepath.Join(dir, "s.db"), nil, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()
	l, err := loop.Create(ctx, store, "s1", loop.Options{Provider: p, Host: exampleHost{}})
	if err != nil {
		panic(err)
	}
	out, err := l.Send(ctx, loop.Text("Say hello."), loop.User)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Reason, out.Steps)
	// Output:
	// completed 1
}
