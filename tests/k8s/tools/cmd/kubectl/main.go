// kubectl for drover's tests: the upstream command tree from k8s.io/kubectl, pinned in
// ../../go.mod to the API server's release. A main of our own because the upstream main
// lives in k8s.io/kubernetes, whose module would pull in the whole server.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// Verbosity must be known before the command tree is built (it reads .kuberc and plugins).
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
