// Command etcd is the upstream etcd server, built from its module so that
// tests do not depend on a downloaded release.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
