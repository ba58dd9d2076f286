// Command manager is the Pangolin Ingress Controller: it publishes Ingresses (and
// HTTPRoutes) through Pangolin. This file only wires: configuration, logging, then the
// manager with the sources and sinks the plugins registry names. `manager render`
// prints what PIC would write for a set of manifests, without a cluster.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/plugins"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "render" {
		os.Exit(render.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run())
}

func run() int {
	cfg, origins, err := config.Load(os.Args[1:], plugins.Names())
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
	ctrl.SetLogger(zap.New(zap.UseDevMode(cfg.LogFormat == "console"), zap.Level(logLevel(cfg.LogLevel))))
	ctx := ctrl.SetupSignalHandler()
	if err := manager.Run(ctx, cfg, plugins.Registry); err != nil {
		ctrl.Log.Error(err, "stopped")
		return 1
	}
	return 0
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
