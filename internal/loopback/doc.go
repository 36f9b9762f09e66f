// Package loopback decides whether a listening address and a request's
// Host name are loopback ones: the checks a local-only HTTP server (the
// recording gateway, the audit UI) makes so that nothing off the machine
// reaches it, and so that a web page cannot reach it through DNS
// rebinding (a name that resolves to 127.0.0.1 but is not a loopback
// name).
//
// Addr says whether a listen address binds loopback only. Name reads a
// Host header (or a configured host name) into its normal form, or
// refuses it; Host says whether a Host header names this machine
// (localhost, a 127.0.0.0/8 address or [::1], any port); Names are the
// three names a loopback server answers to (the audit UI's default set,
// compared in Name's form). Handler wraps an http.Handler so that a
// request with any other Host gets 421 Misdirected Request and never
// reaches it.
package loopback
