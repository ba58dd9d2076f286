// Command manager is the Pangolin Ingress Controller: it publishes Ingresses (and
// HTTPRoutes) through Pangolin. This file only wires: configuration, logging, then the
// manager with the sources and sinks the builtin registry names. `manager render`
// prints what PIC would write for a set of manifests, without a cluster.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "render" {
		os.Exit(render.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run())
}

func run() int {
	cfg, origins, err := config.Load(os.Args[1:], builtin.Names())
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if cfg.PrintConfig {
		if err := config.Print(os.Stdout, cfg, origins); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	ctrl.SetLogger(zap.New(loggerOptions(cfg.LogFormat, cfg.LogLevel)...))
	ctx := ctrl.SetupSignalHandler()
	if err := manager.Run(ctx, cfg, builtin.Registry); err != nil {
		ctrl.Log.Error(err, "stopped")
		return 1
	}
	return 0
}

// loggerOptions are the logger's settings: timestamps to the millisecond (controller-runtime's
// default is whole seconds, too coarse to order a reconcile's lines against the API
// server's or an event's), and a stack only for a programming error (a panic, which
// controller-runtime recovers and logs with its stack): a failed reconcile, retried with
// backoff, is one ERROR line, where zap's defaults added a stack to every ERROR (every
// WARN in console mode).
func loggerOptions(format, level string) []zap.Opts {
	return []zap.Opts{
		zap.UseDevMode(format == "console"), zap.Level(logLevel(level)),
		zap.StacktraceLevel(zapcore.DPanicLevel),
		func(o *zap.Options) { o.TimeEncoder = zapcore.ISO8601TimeEncoder },
		zap.RawZapOpts(uzap.WrapCore(lazyFields)),
	}
}

// logLevel maps PIC's level names onto zap's; "debug" shows logr's V(1) lines.
func logLevel(level string) zapcore.Level {
	switch level {
	case "debug":
		return zapcore.DebugLevel
	case "warn":
		return zapcore.WarnLevel
	case "error":
		return zapcore.ErrorLevel
	}
	return zapcore.InfoLevel
}

// lazyFields makes a logger's fields (WithValues) encoded when it first writes rather
// than when it is made. controller-runtime gives every reconcile a logger with the
// object and a reconcile id; PIC logs only when something changes, so most of them never
// write, and encoding their fields eagerly was an eighth of what PIC allocated.
func lazyFields(core zapcore.Core) zapcore.Core { return lazyCore{core} }

type lazyCore struct{ zapcore.Core }

func (c lazyCore) With(fields []zapcore.Field) zapcore.Core {
	return lazyCore{zapcore.NewLazyWith(c.Core, fields)}
}
