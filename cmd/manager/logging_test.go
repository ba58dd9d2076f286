package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestLoggerTimestampsInMilliseconds(t *testing.T) {
	var out bytes.Buffer
	zap.New(append(loggerOptions("json", "info"), zap.WriteTo(&out))...).Info("started")
	var line struct{ TS string }
	require.NoError(t, json.Unmarshal(out.Bytes(), &line), out.String())
	ts, err := time.Parse("2006-01-02T15:04:05.000Z0700", line.TS)
	require.NoError(t, err, "ts %q", line.TS)
	assert.WithinDuration(t, time.Now(), ts, time.Minute)
}

// TestErrorsCarryNoStack: a reconcile error is one line, in both formats; a stack is
// for a panic.
func TestErrorsCarryNoStack(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var out bytes.Buffer
		log := zap.New(append(loggerOptions(format, "info"), zap.WriteTo(&out))...)
		log.Error(errors.New("pangolin unreachable"), "Reconciler error")
		log.Info("a warning-worthy line")
		assert.NotContains(t, out.String(), "stacktrace", format)
		assert.NotContains(t, out.String(), ".go:", "%s: no stack frames: %s", format, out.String())
		assert.Equal(t, 2, strings.Count(out.String(), "\n"), "%s: one line each: %s", format, out.String())
	}
}

// countingEncoder counts the fields encoded when a logger is derived (With).
type countingEncoder struct {
	zapcore.Encoder
	added *int
}

func (e countingEncoder) Clone() zapcore.Encoder {
	*e.added++
	return countingEncoder{e.Encoder.Clone(), e.added}
}

func TestLazyFields(t *testing.T) {
	var out bytes.Buffer
	clones := 0
	enc := countingEncoder{zapcore.NewJSONEncoder(uzap.NewProductionEncoderConfig()), &clones}
	core := zapcore.NewCore(enc, zapcore.AddSync(&out), zapcore.InfoLevel)
	log := uzap.New(lazyFields(core))

	quiet := log.With(uzap.String("object", "a")).With(uzap.String("reconcileID", "1"))
	quiet.Debug("below the level")
	assert.Zero(t, clones, "fields of a logger that never writes are not encoded")
	assert.Empty(t, out.String())

	loud := log.With(uzap.String("object", "b")).With(uzap.String("reconcileID", "2"))
	loud.Info("created")
	assert.Positive(t, clones)
	assert.Contains(t, out.String(), `"object":"b"`)
	assert.Contains(t, out.String(), `"reconcileID":"2"`)
	assert.Contains(t, out.String(), `"msg":"created"`)
}
