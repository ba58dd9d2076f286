package controller

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestTruncateNote(t *testing.T) {
	short := strings.Repeat("a", maxNoteBytes)
	assert.Equal(t, short, truncateNote(short), "a note of exactly the limit is kept")
	for _, long := range []string{strings.Repeat("a", 5000), strings.Repeat("é", 700), "x" + strings.Repeat("€", 400)} {
		got := truncateNote(long)
		assert.LessOrEqual(t, len(got), maxNoteBytes)
		assert.True(t, utf8.ValidString(got), "cut on a character boundary")
		assert.True(t, strings.HasSuffix(got, "…"))
		assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")))
		assert.Greater(t, len(got), maxNoteBytes-8, "not cut shorter than needed")
	}
}

type noteLog struct{ notes []string }

func (l *noteLog) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	l.notes = append(l.notes, note)
	if len(args) == 1 {
		l.notes[len(l.notes)-1] = args[0].(string)
	}
}

func TestNoteLimiter(t *testing.T) {
	log := &noteLog{}
	r := limitNotes(log)
	r.Eventf(&corev1.ObjectReference{}, nil, corev1.EventTypeWarning, "InvalidAnnotation", "Validate", "%s=%q: want true or false", "sso", strings.Repeat("yes-", 500))
	r.Eventf(&corev1.ObjectReference{}, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s", "pic-a")
	assert.Len(t, log.notes[0], maxNoteBytes)
	assert.True(t, strings.HasPrefix(log.notes[0], `sso="yes-yes-`))
	assert.Equal(t, "Created pic-a", log.notes[1])
	assert.Nil(t, limitNotes(nil))
}
