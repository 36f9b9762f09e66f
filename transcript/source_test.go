package transcript_test

import (
	"io"

	"github.com/sessionlog/sessionlog/codec"
)

// eventList is an in-memory transcript.Events.
type eventList []codec.Event

func (l *eventList) Next() (codec.Event, error) {
	if len(*l) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := (*l)[0]
	*l = (*l)[1:]
	return ev, nil
}
