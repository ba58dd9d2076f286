package controller

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// maxNoteBytes is the API server's limit on the note of an events.k8s.io/v1 Event. A
// longer note makes it refuse the whole event, so a Warning that quotes user input (an
// annotation value, a long path) or the operator's status message would be lost, with
// only a line in client-go's log to show for it: found by the malformed-input corpus
// (testdata/corpus).
const maxNoteBytes = 1024

// noteLimiter cuts every event's note to what the API server accepts.
type noteLimiter struct{ events.EventRecorder }

func limitNotes(r events.EventRecorder) events.EventRecorder {
	if r == nil {
		return nil
	}
	return noteLimiter{r}
}

func (n noteLimiter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	n.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", truncateNote(fmt.Sprintf(note, args...)))
}

// truncateNote returns note, or its first bytes and "…" in at most maxNoteBytes, cut on
// a character boundary.
func truncateNote(note string) string {
	if len(note) <= maxNoteBytes {
		return note
	}
	const ellipsis = "…"
	cut := maxNoteBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + ellipsis
}
