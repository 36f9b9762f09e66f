package eventlog

import "github.com/sessionlog/sessionlog/eventlog/layout"

// DecodeMetaRecord decodes the store's format record (meta/format): the
// frame, then the msgpack map, unknown fields allowed (a newer format may
// add some; its version decides). It is the one reader of that record,
// for the store and for salvage. Failures are marked ErrCorrupt
// (ErrUnsupported for a newer record version).
func DecodeMetaRecord(rec []byte) (layout.MetaRecord, error) { return decodeMeta(rec) }

// DecodeHeadRecord decodes a session's head record strictly: the frame,
// exactly its fields, values in range. It is the one reader of that
// record, for the store and for salvage. Failures are marked ErrCorrupt
// (ErrUnsupported for a newer record version).
func DecodeHeadRecord(rec []byte) (layout.HeadRecord, error) { return decodeHead(rec) }
