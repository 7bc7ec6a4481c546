// Command k8s is one binary for every upstream Kubernetes component the e2e
// suite runs, chosen by the name it is called by (argv[0], through symlinks)
// or by its first argument: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy, kubelet, kubectl. One binary links the shared packages once,
// which keeps the cold build of a version short (docs/testing.md).
//
// Nothing here is upstream code: each case calls the component's own command
// constructor, exactly as that component's main package does.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args
	if !known(name) && len(os.Args) > 1 {
		name, args = os.Args[1], os.Args[1:]
	}
	os.Args = args
	switch name {
	case "etcd":
		etcdmain.Main(args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kube-proxy":
		os.Exit(cli.Run(proxy.NewProxyCommand()))
	case "kubelet":
		os.Exit(cli.Run(kubelet.NewKubeletCommand(context.Background())))
	case "kubectl":
		logs.GlogSetter(cmd.GetLogVerbosity(args)) //nolint:errcheck
		if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
			util.CheckErr(err)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: k8s etcd|kube-apiserver|kube-controller-manager|"+
			"kube-scheduler|kube-proxy|kubelet|kubectl [args]")
		os.Exit(2)
	}
}

func known(name string) bool {
	switch name {
	case "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
		"kubelet", "kubectl":
		return true
	}
	return false
}
