package verify

// StoreChecker is a store that can check its own structures, below the
// sessions; *eventlog.Log is one.
type StoreChecker interface {
	// CheckMeta checks the two meta pages: bbolt opens a store whose
	// newest one is damaged on the older one, one commit back.
	CheckMeta() error
}

// CheckStore checks the store's own structures and returns what it finds, as
// corrupt findings whose Session is "" and Seq -1. Run it once per store,
// next to Session for each session.
func CheckStore(s StoreChecker) []Finding {
	var out []Finding
	if err := s.CheckMeta(); err != nil {
		out = append(out, Finding{Seq: -1, Kind: Corrupt, Message: err.Error(), Err: err})
	}
	return out
}
