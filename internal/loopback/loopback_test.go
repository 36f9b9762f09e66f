package loopback_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sessionlog/sessionlog/internal/loopback"
)

func TestAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"localhost:80", true},
		{"LocalHost:80", true},
		{"[::1]:9", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.168.1.2:8080", false},
		{"example.com:80", false},
		{"127.0.0.1", false}, // no port: not an address
		{"", false},
	}
	for _, tt := range tests {
		if got := loopback.Addr(tt.addr); got != tt.want {
			t.Errorf("Addr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"localhost:1234", true},
		{"LOCALHOST:1", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8080", true},
		{"[::1]", true},
		{"[::1]:8080", true},
		{"::1", true},
		{"localhost.", false},
		{"evil.example:8080", false},
		{"localhost.evil.example", false},
		{"127.0.0.1.nip.io", false},
		{"10.0.0.1:80", false},
		{"", false},
		{"[::1", false},
		{"127.0.0.2:80", true},
		{"[0:0:0:0:0:0:0:1]:8080", true},
		{"[127.0.0.1]:80", false},
		{"localhost:80x", false},
		{"local host", false},
	}
	for _, tt := range tests {
		if got := loopback.Host(tt.host); got != tt.want {
			t.Errorf("Host(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestHandler(t *testing.T) {
	reached := 0
	h := loopback.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	for _, tt := range []struct {
		host string
		code int
	}{
		{"127.0.0.1:5555", http.StatusOK},
		{"localhost", http.StatusOK},
		{"rebind.example:5555", http.StatusMisdirectedRequest},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tt.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.code {
			t.Errorf("Host %q: status %d, want %d", tt.host, w.Code, tt.code)
		}
	}
	if reached != 2 {
		t.Errorf("the handler was reached %d times, want 2", reached)
	}
}
