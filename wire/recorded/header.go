package recorded

import "github.com/sessionlog/sessionlog/codec"

// HeaderKey is the session header's key the recording gateway writes its
// own facts under (docs/gateway.md#sessions): {"upstream", "agentSession"?, "from"?,
// "run"?, "api"?, "root"?}. api and root name the session's lane: the
// API its requests are mapped with and the root of its conversation
// (transcript.Root).
const HeaderKey = "gateway"

// HeaderLane returns the api and root of a recorded session's lane, as
// its header (the storage form, codec.SessionHeader.Raw) names them; ""
// when it names none (a session of the recorded bytes alone).
func HeaderLane(raw []byte) (api, root string) {
	f := codec.NewFields(raw, codec.PrefixCodec)
	_ = f.Object("header", func(k []byte) error {
		if string(k) != HeaderKey {
			return f.Skip()
		}
		return f.Object(HeaderKey, func(k []byte) error {
			switch string(k) {
			case "api":
				s, err := f.Str("api")
				api = s
				return err
			case "root":
				s, err := f.Str("root")
				root = s
				return err
			}
			return f.Skip()
		})
	})
	if api == "" || root == "" {
		return "", ""
	}
	return api, root
}
