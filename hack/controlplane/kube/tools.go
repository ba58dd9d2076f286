//go:build tools

// This file only pins the dependency graph: the binaries are built with
// `go build k8s.io/kubernetes/cmd/<name>` from this module (see ../build.sh).
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)
