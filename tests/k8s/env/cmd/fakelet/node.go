package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	gpuResource     = corev1.ResourceName("nvidia.com/gpu")
	nodeLeaseNS     = "kube-node-lease"
	fakeletVersion  = "fakelet"
	nodeLeaseSecond = 40
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func cmdNode(args []string) error {
	if len(args) < 1 {
		usage()
		return fmt.Errorf("node: missing subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("node "+sub, flag.ExitOnError)
	kc := kubeconfigFlag(fs)
	cpu := fs.String("cpu", "8", "cpu capacity")
	mem := fs.String("memory", "32Gi", "memory capacity")
	gpus := fs.Int("gpus", 0, "nvidia.com/gpu capacity")
	pods := fs.Int("pods", 110, "pods capacity")
	storage := fs.String("ephemeral-storage", "100Gi", "ephemeral-storage capacity")
	unsched := fs.Bool("unschedulable", false, "create the node cordoned")
	var labels, taints multiFlag
	fs.Var(&labels, "label", "node label k=v (repeatable)")
	fs.Var(&taints, "taint", "node taint k[=v]:Effect (repeatable)")
	// Allow "node create NAME --flags" as well as "node create --flags NAME".
	rest := args[1:]
	var names []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			names = append(names, rest[0])
			rest = rest[1:]
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("node %s: missing node name", sub)
	}
	cs, _, err := clientFor(*kc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, name := range names {
		switch sub {
		case "create":
			spec := nodeSpec{name: name, cpu: *cpu, memory: *mem, gpus: *gpus, pods: *pods,
				storage: *storage, unschedulable: *unsched, labels: labels, taints: taints}
			err = createNode(ctx, cs, spec)
		case "cordon", "uncordon":
			err = setUnschedulable(ctx, cs, name, sub == "cordon")
		case "delete":
			err = cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				err = nil
			}
		default:
			usage()
			return fmt.Errorf("node: unknown subcommand %q", sub)
		}
		if err != nil {
			return fmt.Errorf("node %s %s: %w", sub, name, err)
		}
		fmt.Printf("node/%s %s\n", name, map[string]string{"create": "created", "cordon": "cordoned", "uncordon": "uncordoned", "delete": "deleted"}[sub])
	}
	return nil
}

type nodeSpec struct {
	name, cpu, memory, storage string
	gpus, pods                 int
	unschedulable              bool
	labels, taints             []string
}

func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q: want key[=value]:Effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Taint{}, fmt.Errorf("taint %q: bad effect %q", s, effect)
	}
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, nil
}

func createNode(ctx context.Context, cs kubernetes.Interface, s nodeSpec) error {
	capacity := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: s.cpu, corev1.ResourceMemory: s.memory,
		corev1.ResourceEphemeralStorage: s.storage, corev1.ResourcePods: fmt.Sprint(s.pods),
	} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", name, q, err)
		}
		capacity[name] = v
	}
	if s.gpus > 0 {
		capacity[gpuResource] = *resource.NewQuantity(int64(s.gpus), resource.DecimalSI)
	}
	labels := map[string]string{
		labelManaged:             "true",
		"kubernetes.io/hostname": s.name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "fakelet",
	}
	for _, l := range s.labels {
		k, v, _ := strings.Cut(l, "=")
		labels[k] = v
	}
	var taints []corev1.Taint
	for _, t := range s.taints {
		taint, err := parseTaint(t)
		if err != nil {
			return err
		}
		taints = append(taints, taint)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Spec: corev1.NodeSpec{Unschedulable: s.unschedulable, Taints: taints},
	}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := cs.CoreV1().Nodes().Get(ctx, s.name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		for k, v := range labels {
			if cur.Labels == nil {
				cur.Labels = map[string]string{}
			}
			cur.Labels[k] = v
		}
		cur.Spec.Unschedulable = s.unschedulable
		cur.Spec.Taints = taints
		created, err = cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	now := metav1.Now().Rfc3339Copy()
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity.DeepCopy(),
		Phase:       corev1.NodeRunning,
		Conditions:  nodeConditions(now),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: s.name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: s.name, SystemUUID: s.name, BootID: s.name,
			KernelVersion: "fakelet", OSImage: "fakelet", ContainerRuntimeVersion: "fakelet://0",
			KubeletVersion: fakeletVersion, KubeProxyVersion: "", OperatingSystem: "linux", Architecture: "amd64",
		},
	}
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

func nodeConditions(now metav1.Time) []corev1.NodeCondition {
	c := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []corev1.NodeCondition{
		c(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "fakelet is posting ready status"),
		c(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "fakelet"),
		c(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "fakelet"),
		c(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "fakelet"),
		c(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated", "fakelet"),
	}
}

func setUnschedulable(ctx context.Context, cs kubernetes.Interface, name string, v bool) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": v}})
	_, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// heartbeatNode renews the node's Lease and its Ready condition's heartbeat, as
// the kubelet does, so a node lifecycle controller (if one runs) keeps it Ready.
func heartbeatNode(ctx context.Context, cs kubernetes.Interface, node *corev1.Node, statusToo bool) error {
	now := metav1.NowMicro()
	leases := cs.CoordinationV1().Leases(nodeLeaseNS)
	lease, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: nodeLeaseNS,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name),
				LeaseDurationSeconds: ptr.To(int32(nodeLeaseSecond)), RenewTime: &now},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	case err == nil:
		lease.Spec.RenewTime = &now
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("lease %s: %w", node.Name, err)
	}
	if !statusToo {
		return nil
	}
	ts := metav1.Now().Rfc3339Copy()
	var conds []map[string]any
	for _, c := range node.Status.Conditions {
		m := map[string]any{"type": c.Type, "lastHeartbeatTime": ts}
		conds = append(conds, m)
	}
	if len(conds) == 0 {
		for _, c := range nodeConditions(ts) {
			conds = append(conds, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason,
				"message": c.Message, "lastHeartbeatTime": ts, "lastTransitionTime": ts})
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	_, err = cs.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node status %s: %w", node.Name, err)
	}
	return nil
}
