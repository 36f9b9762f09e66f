// Package printable makes text from a file, a server, a client or a log
// safe to put on a terminal: the one place where logtool (and salvage's
// report) escape what they print for people. A session id, a model or
// tool name, a call id, replayed text or a server's error message can
// hold control characters that retitle a terminal, clear it or forge
// lines; printed through this package they are shown as escapes instead.
//
// Escapes have Go's form (strconv.Quote's): \n, \t, \r, \a, \b, \f and \v
// for those C0 characters, \xNN for the other C0 characters, for DEL
// (\x7f) and for each byte of invalid UTF-8, and \u0080 to \u009f for the
// C1 characters. A backslash is left as it is, so text passed through
// twice is escaped once.
//
//   - ID is for a session id (and other names printed as one word): as it
//     is when every character is printable and none is a space or a double
//     quote, else quoted with strconv.Quote.
//   - Line is for a value printed on one line: every control character
//     escaped, \n and \t too.
//   - Text is for multi-line text (replayed messages, a system prompt, an
//     error with its hints): \n and \t kept, every other control character
//     escaped.
//   - Writer applies Text to everything written through it: a command's
//     human-readable output goes through one, JSON and raw output does not.
//
// It imports only the standard library and sits below every package that
// prints.
package printable
