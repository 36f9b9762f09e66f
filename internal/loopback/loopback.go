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

// Names are the Host names of a server on a loopback address:
// localhost, 127.0.0.1 and [::1] (in Name's form).
func Names() []string { return []string{"localhost", "127.0.0.1", "[::1]"} }

// Host reports whether host, a request's Host header (with or without a
// port), names this machine: localhost, an address in 127.0.0.0/8, or
// [::1], as Name reads it. Names are compared without case; a trailing
// dot is refused, as is anything that is not a plain name or address.
func Host(host string) bool {
	n, ok := Name(host)
	if !ok {
		return false
	}
	return name(strings.TrimSuffix(strings.TrimPrefix(n, "["), "]"))
}

// Name returns the name of a Host header or of a configured host name,
// lower-case, without its port, an IPv6 address in brackets in its
// canonical form; ok is false when h is not a host name or address with
// an optional numeric port.
func Name(h string) (string, bool) {
	h = strings.ToLower(h)
	name, port := h, ""
	switch {
	case strings.HasPrefix(h, "["):
		i := strings.IndexByte(h, ']')
		if i < 0 {
			return "", false
		}
		name, port = h[1:i], h[i+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return "", false
		}
		ip := net.ParseIP(name)
		if ip == nil || ip.To4() != nil {
			return "", false
		}
		name = "[" + ip.String() + "]"
	case strings.Count(h, ":") > 1: // an IPv6 address without brackets (a configured name, not a Host)
		ip := net.ParseIP(h)
		if ip == nil || ip.To4() != nil {
			return "", false
		}
		return "[" + ip.String() + "]", true
	default:
		if i := strings.IndexByte(h, ':'); i >= 0 {
			name, port = h[:i], h[i:]
		}
		if name == "" {
			return "", false
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
				return "", false
			}
		}
	}
	if port != "" {
		for _, c := range port[1:] {
			if c < '0' || c > '9' {
				return "", false
			}
		}
	}
	return name, true
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

// name reports whether a bare host (no port, no brackets) is loopback.
func name(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
