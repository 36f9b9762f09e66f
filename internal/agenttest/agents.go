package agenttest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessionlog/sessionlog/internal/fakemodel"
)

// Key is the API key every agent is given: not a key of any provider,
// and easy to search for in whatever a test wants free of keys.
const Key = "sk-test-agenttest-0000000000000000"

// Agent is one installed agent, configured in an Env to use the model
// at a base URL.
type Agent struct {
	Name string
	Bin  string
	env  *Env
	vars []string // the agent's own environment on top of env.Vars
	// model is the model named on the command line ("" for the agent's
	// default).
	model string
}

// NewAgent configures the agent name (Claude, Codex or Gemini) in e to
// send its model requests to baseURL (scheme, host and port, no path),
// skipping or failing t as Binary does when it is not installed.
//
//   - Claude Code: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, telemetry,
//     auto-update, error reporting and non-essential traffic off.
//   - Codex: $CODEX_HOME/config.toml with a model provider "fake" whose
//     base_url is baseURL + "/v1" (wire_api "responses", no retries), the
//     update check, analytics, feedback, OpenTelemetry export and plugins
//     (whose start-up sync calls GitHub and chatgpt.com) off; the
//     default model.
//   - Gemini CLI: GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY;
//     settings.json with auto-update, usage statistics and telemetry off
//     and folder trust off; the model named on the command line, which
//     skips the router's classifier call.
func NewAgent(t testing.TB, e *Env, name, baseURL string) *Agent {
	t.Helper()
	a := &Agent{Name: name, Bin: Binary(t, name), env: e}
	switch name {
	case Claude:
		a.vars = []string{
			"ANTHROPIC_BASE_URL=" + baseURL,
			"ANTHROPIC_API_KEY=" + Key,
			"DISABLE_TELEMETRY=1",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_ERROR_REPORTING=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		}
	case Codex:
		home := filepath.Join(e.Home, ".codex")
		config := `check_for_update_on_startup = false
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = ` + strconv.Quote(baseURL+"/v1") + `
env_key = "FAKE_MODEL_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false
`
		writeFile(t, filepath.Join(home, "config.toml"), config)
		a.vars = []string{"CODEX_HOME=" + home, "FAKE_MODEL_API_KEY=" + Key}
	case Gemini:
		settings := map[string]any{
			"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
			"security": map[string]any{
				"auth":        map[string]any{"selectedType": "gemini-api-key"},
				"folderTrust": map[string]any{"enabled": false},
			},
		}
		b, err := json.Marshal(settings)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(e.Home, ".gemini", "settings.json"), string(b))
		a.vars = []string{"GOOGLE_GEMINI_BASE_URL=" + baseURL, "GEMINI_API_KEY=" + Key}
		a.model = "gemini-3.1-pro-preview"
	default:
		t.Fatalf("agenttest: no agent %q", name)
	}
	return a
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Shell returns the call of the agent's shell tool that runs command.
func (a *Agent) Shell(command string) fakemodel.Call {
	q := strconv.Quote(command) // a JSON string for the ASCII commands tests use
	switch a.Name {
	case Claude:
		return fakemodel.Call{Name: "Bash", Arguments: `{"command":` + q + `,"description":"Run the command"}`}
	case Codex:
		return fakemodel.Call{Name: "exec_command", Arguments: `{"cmd":` + q + `}`}
	default:
		return fakemodel.Call{Name: "run_shell_command", Arguments: `{"command":` + q + `}`}
	}
}

// Start runs the agent once, non-interactively, on prompt, allowed to
// run its shell tool without asking.
func (a *Agent) Start(t testing.TB, prompt string) Result {
	t.Helper()
	switch a.Name {
	case Claude:
		return a.env.Run(t, a.vars, a.Bin, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash", "Read")
	case Codex:
		return a.env.Run(t, a.vars, a.Bin, "exec", "--skip-git-repo-check", "--strict-config",
			"--dangerously-bypass-approvals-and-sandbox", prompt)
	default:
		return a.env.Run(t, a.vars, a.Bin, "-m", a.model, "--yolo", "--output-format", "json", "-p", prompt)
	}
}

// Resume continues the agent's most recent session in e with prompt.
func (a *Agent) Resume(t testing.TB, prompt string) Result {
	t.Helper()
	switch a.Name {
	case Claude:
		return a.env.Run(t, a.vars, a.Bin, "-p", "--continue", prompt, "--output-format", "json", "--allowedTools", "Bash", "Read")
	case Codex:
		return a.env.Run(t, a.vars, a.Bin, "exec", "--skip-git-repo-check", "--strict-config",
			"--dangerously-bypass-approvals-and-sandbox", "resume", "--last", prompt)
	default:
		return a.env.Run(t, a.vars, a.Bin, "-m", a.model, "--yolo", "--output-format", "json", "--resume", "latest", "-p", prompt)
	}
}

// SessionHeaders are the request headers that carry each agent's session
// id: X-Claude-Code-Session-Id; Codex's Session-Id and Thread-Id. Gemini
// CLI sends none (its session id is only in its own output).
var SessionHeaders = map[string][]string{
	Claude: {"X-Claude-Code-Session-Id"},
	Codex:  {"Session-Id", "Thread-Id"},
}

// SessionID returns the session id request h carries for the agent
// ("" when it carries none): its session headers' values, joined by a
// space.
func (a *Agent) SessionID(h http.Header) string {
	id := ""
	for i, name := range SessionHeaders[a.Name] {
		if i > 0 {
			id += " "
		}
		id += h.Get(name)
	}
	return id
}
