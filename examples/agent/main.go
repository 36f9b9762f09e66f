package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// config is what the flags say.
type config struct {
	provider, baseURL, model, keyEnv string
	db, session, root                string
	verbose                          bool
	prompt                           string
}

const usage = "usage: agent --provider openai-chat|anthropic-messages --base-url URL --model MODEL [flags] [PROMPT...]"

// defaultKeyEnv is the variable holding the key, per API.
var defaultKeyEnv = map[string]string{wire.OpenAIChat: "OPENAI_API_KEY", wire.AnthropicMessages: "ANTHROPIC_API_KEY"}

// errUsage marks a usage error (exit 2).
var errUsage = errors.New("usage")

func parse(args []string, stdin io.Reader, stderr io.Writer) (config, error) {
	var c config
	fl := flag.NewFlagSet("agent", flag.ContinueOnError)
	fl.SetOutput(io.Discard) // run reports the error once
	fl.StringVar(&c.provider, "provider", "", "the API: "+wire.OpenAIChat+" or "+wire.AnthropicMessages)
	fl.StringVar(&c.baseURL, "base-url", "", "the API's base URL, e.g. https://api.openai.com/v1")
	fl.StringVar(&c.model, "model", "", "the model")
	fl.StringVar(&c.keyEnv, "api-key-env", "", "the environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	fl.StringVar(&c.db, "db", "sessions.db", "the session store")
	fl.StringVar(&c.session, "session", "", "continue this session (default: a new one)")
	fl.StringVar(&c.root, "root", ".", "the folder the tools may read")
	fl.BoolVar(&c.verbose, "verbose", false, "debug logs on stderr")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stderr)
			fmt.Fprintln(stderr, usage)
			fl.PrintDefaults()
		}
		return c, errclass.Mark(err, errUsage)
	}
	if c.provider == "" || c.baseURL == "" || c.model == "" {
		return c, errclass.Mark(errors.New("--provider, --base-url and --model are required"), errUsage)
	}
	if c.keyEnv == "" {
		c.keyEnv = defaultKeyEnv[c.provider]
	}
	c.prompt = strings.Join(fl.Args(), " ")
	if c.prompt == "" {
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		if err != nil {
			return c, errors.Wrap(err, "read the prompt from standard input")
		}
		c.prompt = strings.TrimSpace(string(b))
	}
	if c.prompt == "" {
		return c, errclass.Mark(errors.New("no prompt (give it as arguments or on standard input)"), errUsage)
	}
	return c, nil
}

// run is the program; main only wires the process to it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c, err := parse(args, stdin, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "agent: %v\n%s\n", err, usage)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return 1
	}
	if err := agent(ctx, c, stdout, stderr, getenv); err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		for _, h := range errors.GetAllHints(err) {
			fmt.Fprintln(stderr, h)
		}
		return 1
	}
	return 0
}

func agent(ctx context.Context, c config, stdout, stderr io.Writer, getenv func(string) string) error {
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if c.keyEnv == defaultKeyEnv[c.provider] && getenv(c.keyEnv) == "" {
		// A local server may need no key; a real API answers AUTH.
		log.Warn("agent: no API key: the variable is not set; sending requests without one", "variable", c.keyEnv)
		c.keyEnv = ""
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return errors.Wrap(err, "--root")
	}
	defer root.Close()
	p, err := provider.New(provider.Options{Wire: c.provider, BaseURL: c.baseURL, APIKeyEnv: c.keyEnv,
		Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	store, err := sessionlog.Open(ctx, c.db, &eventlog.Options{Logger: log}, nil)
	if err != nil {
		return err
	}
	defer store.Close()

	h := host{cfg: header.Config{Provider: c.provider, HasProvider: true, Model: c.model, HasWire: true, Wire: p.Wire()},
		tools: tools(root)}
	opts := loop.Options{Provider: printing{p, stdout}, Host: h, Logger: log}
	var l *loop.Loop
	if c.session != "" {
		l, err = loop.Open(ctx, store, c.session, opts)
	} else {
		l, err = loop.Create(ctx, store, newID(), opts)
	}
	if err != nil {
		return err
	}
	out, err := l.Send(ctx, loop.Text(c.prompt), loop.User)
	fmt.Fprintln(stdout)
	// Nothing is in flight once Send returned; the bound is for form.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if derr := l.Dispose(dctx); err == nil {
		err = derr
	}
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nSession %s, turn %d: %s after %d steps. Audit it with:\n", l.ID(), out.Turn, out.Reason, out.Steps)
	fmt.Fprintf(stdout, "  logtool --db %s replay %s         # every request the model got, rebuilt from the log\n", c.db, l.ID())
	fmt.Fprintf(stdout, "  logtool --db %s replay %s --wire  # the exact HTTP bodies\n", c.db, l.ID())
	fmt.Fprintf(stdout, "  logtool --db %s verify %s --strict\n", c.db, l.ID())
	fmt.Fprintf(stdout, "Continue it with --session %s.\n", l.ID())
	if out.Reason != "completed" {
		msg := out.Reason
		if out.Code != "" {
			msg += " (" + out.Code + ")"
		}
		return errors.Newf("the turn ended %s", errors.Safe(msg))
	}
	return nil
}

// host is the agent's per-step answer: the same system prompt, tools and
// config every step.
type host struct {
	cfg   header.Config
	tools []loop.Tool
}

const system = "You are a helpful assistant with read-only access to one folder. " +
	"Use list_folder and read_file to look before you answer. Be brief."

func (h host) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	return loop.StepSpec{System: system, Tools: h.tools, Config: h.cfg}, nil
}

// maxRead bounds what read_file returns.
const maxRead = 64 << 10

// tools are the two tools, confined to root (os.Root refuses paths that
// leave it, symbolic links included).
func tools(root *os.Root) []loop.Tool {
	pathParams := []byte(`{"type":"object","properties":{"path":{"type":"string","description":"a path relative to the folder"}},"required":["path"]}`)
	return []loop.Tool{
		{Name: "list_folder", Description: "List the entries of a folder (\".\" is the top).", Parameters: pathParams,
			Run: func(_ context.Context, c loop.Call) (loop.Result, error) {
				path, err := pathArg(c.Arguments)
				if err != nil {
					return loop.Result{}, err
				}
				entries, err := fs.ReadDir(root.FS(), path)
				if err != nil {
					return loop.Result{}, err
				}
				names := make([]string, 0, len(entries))
				for _, e := range entries {
					n := e.Name()
					if e.IsDir() {
						n += "/"
					}
					names = append(names, n)
				}
				sort.Strings(names)
				return loop.Result{Content: loop.Text(strings.Join(names, "\n"))}, nil
			}},
		{Name: "read_file", Description: "Read a text file (at most 64 KiB).", Parameters: pathParams,
			Run: func(_ context.Context, c loop.Call) (loop.Result, error) {
				path, err := pathArg(c.Arguments)
				if err != nil {
					return loop.Result{}, err
				}
				f, err := root.Open(path)
				if err != nil {
					return loop.Result{}, err
				}
				defer f.Close()
				b, err := io.ReadAll(io.LimitReader(f, maxRead))
				if err != nil {
					return loop.Result{}, err
				}
				return loop.Result{Content: loop.Text(strings.ToValidUTF8(string(b), "\uFFFD"))}, nil
			}},
	}
}

// pathArg reads {"path": "..."}; an empty path is the top folder.
func pathArg(args string) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "", errors.New("the arguments are not {\"path\": string}")
	}
	if a.Path == "" || a.Path == "/" {
		return ".", nil
	}
	return strings.TrimPrefix(a.Path, "/"), nil
}

// printing streams the answer's text to w as it arrives.
type printing struct {
	p loop.Provider
	w io.Writer
}

func (p printing) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	s, err := p.p.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return printingStream{s, p.w}, nil
}

type printingStream struct {
	loop.Stream
	w io.Writer
}

func (s printingStream) Next() (loop.Chunk, error) {
	c, err := s.Stream.Next()
	if err == nil && c.Type == loop.ChunkTextDelta {
		_, _ = io.WriteString(s.w, c.Text)
	}
	return c, err
}

// newID is a random session id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "agent-" + hex.EncodeToString(b[:])
}
