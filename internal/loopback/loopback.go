package loopback

import (
	"net"
	"net/http"
	"strings"
)

// Addr reports whether the listen address addr (HOST:PORT) binds a
// loopback address only: localhost, or an IP address that is loopback.
// An empty host (":8080") binds every interface and is not loopback.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return name(host)
}

// Host reports whether host, a request's Host header (with or without a
// port), names this machine: localhost, an address in 127.0.0.0/8, or
// [::1]. Names are compared without case; a trailing dot is refused, as
// is anything that is not a plain name or address.
func Host(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return name(host)
}

func name(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler answers 421 Misdirected Request to a request whose Host is not
// a loopback name (see Host), and hands every other request to next.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Host(r.Host) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusMisdirectedRequest)
			_, _ = w.Write([]byte("this server answers loopback Host names only (localhost, 127.0.0.1, [::1])\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
