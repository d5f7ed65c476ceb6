// Command etcd is etcd 3.7 built from go.etcd.io/etcd/server/v3, because
// `go install` of that module fails on its replace directives.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
