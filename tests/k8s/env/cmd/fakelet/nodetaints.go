package main

import (
	"context"
	"encoding/json"
	"log"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The API server taints every new Node node.kubernetes.io/not-ready:NoSchedule, and
// kube-controller-manager's node lifecycle controller lifts the taint once the Node is Ready.
// That controller is not run here (it would evict the pods of Nodes nobody heartbeats), so the
// fakelet lifts the taint of its Ready Nodes itself; without that the scheduler places nothing.
const taintNotReady = "node.kubernetes.io/not-ready"

func (c *controller) liftNotReadyTaints(ctx context.Context, inf cache.SharedIndexInformer) error {
	lift := func(obj any) {
		n, ok := obj.(*corev1.Node)
		if !ok || !nodeReady(n) {
			return
		}
		var keep []corev1.Taint
		found := false
		for _, t := range n.Spec.Taints {
			if t.Key == taintNotReady {
				found = true
				continue
			}
			keep = append(keep, t)
		}
		if !found {
			return
		}
		// A JSON merge patch with a resourceVersion: a concurrent change of the taints
		// conflicts, and the next event of the node tries again.
		patch, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": n.ResourceVersion},
			"spec":     map[string]any{"taints": keep}})
		_, err := c.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			log.Printf("fakelet: node %s: lifting %s: %v", n.Name, taintNotReady, err)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: lift, UpdateFunc: func(_, n any) { lift(n) }})
	return err
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
