// Command etcd is etcd's own server entry point, built from the Go module proxy
// at the version k8s.io/kubernetes pins (see go.mod).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
