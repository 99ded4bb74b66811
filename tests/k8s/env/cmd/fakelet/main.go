// Command fakelet is drover's kubelet stand-in for tests against a real
// kube-apiserver (see tests/k8s/README.md).
//
//	fakelet run   [--kubeconfig K] [--all-nodes] [--state-dir D] ...
//	    Acts as the kubelet of every fake Node (label fakelet.drover.test/managed=true,
//	    or every Node with --all-nodes): moves the Pods bound to them through
//	    Pending -> Running -> Succeeded/Failed, finishes graceful deletions, renews
//	    node Leases, and runs a Pod's containers as local processes when the Pod
//	    has the annotation fakelet.drover.test/exec=true.
//	fakelet node create NAME [--cpu 8] [--memory 32Gi] [--gpus 0] [--pods 110]
//	                         [--label k=v]... [--taint k=v:NoSchedule]... [--unschedulable]
//	fakelet node cordon|uncordon|delete NAME...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	annPrefix = "fakelet.drover.test/"
	// Label put on Nodes created by "fakelet node create"; "fakelet run" manages them.
	labelManaged = annPrefix + "managed"

	// Pod annotations understood by "fakelet run".
	annExec       = annPrefix + "exec"        // "true": run the containers as local processes
	annRunFor     = annPrefix + "run-for"     // simulated pods: Go duration to stay Running, then terminate
	annExitCode   = annPrefix + "exit-code"   // simulated pods: exit code when they terminate (default 0)
	annComplete   = annPrefix + "complete"    // "Succeeded"/"Failed" (or an exit code): terminate a running pod now
	annStartDelay = annPrefix + "start-delay" // Go duration to stay Pending (ContainerCreating) first
)

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  fakelet run [flags]                      act as the kubelet of the fake nodes
  fakelet node create NAME [flags]         create (or update) a fake node with capacity
  fakelet node cordon|uncordon NAME...     set spec.unschedulable
  fakelet node delete NAME...              delete nodes
Run "fakelet run -h" or "fakelet node create -h" for flags.
Every command takes --kubeconfig (default $KUBECONFIG).
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = cmdRun(os.Args[2:])
	case "node":
		err = cmdNode(os.Args[2:])
	case "mount-exec":
		err = cmdMountExec(os.Args[2:])
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakelet: %v\n", err)
		os.Exit(1)
	}
}

func kubeconfigFlag(fs *flag.FlagSet) *string {
	return fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG)")
}

func clientFor(kubeconfig string) (*kubernetes.Clientset, *rest.Config, error) {
	if kubeconfig == "" {
		return nil, nil, fmt.Errorf("no kubeconfig: pass --kubeconfig or set KUBECONFIG")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS = 200
	cfg.Burst = 400
	cfg.UserAgent = "fakelet"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, cfg, nil
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
