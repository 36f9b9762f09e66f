package agenttest

import (
	"net/http/httptest"
	"testing"
)

// TestAgents runs each installed agent against the scripted model: a
// first run in which the model calls the agent's shell tool twice, one
// call a step, then answers, and a resumed run. The agent must exit 0 both times,
// run the tool (its output comes back in a later request), send the
// earlier conversation when resumed, keep its session id across the
// resume, and send nothing anywhere but the model (the proxy sink sees
// no attempt): Session.Check.
func TestAgents(t *testing.T) {
	for _, name := range []string{Claude, Codex, Gemini} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			srv := httptest.NewUnstartedServer(nil)
			t.Cleanup(srv.Close)
			a := NewAgent(t, env, name, "http://"+srv.Listener.Addr().String())
			fm := Script(t, a)
			srv.Config.Handler = fm
			srv.Start()
			s := RunSession(t, a, fm)
			s.Report(t)
			s.Check(t)
		})
	}
}
