// Package engine is what every Store of this module does alike, written
// once: the checks and validation before a write (the rules of
// docs/rules.md#appends), the per-session writer locks and validator cache, the group
// commit's queue and drain loop, the staging and publication of Import
// and Fork and their fork checks, the paged iterator of Scan, and the
// commit metrics. A driver (eventlog/boltlog, eventlog/pglog) holds only
// its I/O, behind the narrow Backend interface: read a head, read a page
// of events, read a page of heads, commit a batch of writes, stage a
// session, close.
//
// It is internal to eventlog: a driver embeds *Engine, whose exported
// methods are exactly the eventlog.Store methods (with CommitStats and
// SessionPage), and reaches the rest (Begin, CreateUnchecked, …) through
// package-level functions, which are not promoted to the driver's type,
// so that nothing of the plumbing becomes a host's API.
package engine
