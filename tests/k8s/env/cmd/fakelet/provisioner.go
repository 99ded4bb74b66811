package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// A hostPath provisioner, so that claims (a StatefulSet's volumeClaimTemplates) bind as on a
// real cluster: the fakelet registers a default StorageClass whose provisioner is its own
// (WaitForFirstConsumer, as local volumes are); once the scheduler has chosen the first pod's
// node, kube-controller-manager's PersistentVolume controller marks the claim for the fakelet,
// which creates a PersistentVolume pre-bound to the claim (a directory under its state dir, with
// that node's affinity), and the PV controller binds the two. A released volume of the class is deleted with its
// directory (reclaimPolicy Delete); a retained claim keeps it, as the chart's journal does.
const (
	storageClassName = "fakelet-hostpath"
	provisionerName  = "fakelet.drover.test/hostpath"
	annProvisioner   = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
)

func (c *controller) runProvisioner(ctx context.Context) error {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: storageClassName, Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:   provisionerName,
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete),
		// The scheduler picks the pod's node first, then the volume is made there: a claim
		// bound later than its pod was found unschedulable would wait out the scheduler's
		// backoff for unschedulable pods.
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := c.cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		return err
	}
	f := informers.NewSharedInformerFactory(c.cs, 0)
	pvcs, pvs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes()
	onPVC := func(obj any) {
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			c.provision(ctx, pvc)
		}
	}
	onPV := func(obj any) {
		if pv, ok := obj.(*corev1.PersistentVolume); ok {
			c.reclaim(ctx, pv)
		}
	}
	if _, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPVC, UpdateFunc: func(_, n any) { onPVC(n) }}); err != nil {
		return err
	}
	if _, err := pvs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPV, UpdateFunc: func(_, n any) { onPV(n) }}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	// Events can be missed while the API server is busy: look again now and then.
	go wait.Until(func() {
		if l, err := pvcs.Lister().List(labels.Everything()); err == nil {
			for _, p := range l {
				c.provision(ctx, p)
			}
		}
	}, 5*time.Second, ctx.Done())
	return nil
}

func (c *controller) pvDir(name string) string {
	return filepath.Join(c.stateDir, "pv", name)
}

func (c *controller) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeName != "" || pvc.Status.Phase != corev1.ClaimPending || pvc.DeletionTimestamp != nil ||
		pvc.Annotations[annProvisioner] != provisionerName {
		return
	}
	name := "pvc-" + string(pvc.UID)
	dir := c.pvDir(name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		log.Printf("fakelet: provisioning %s/%s: %v", pvc.Namespace, pvc.Name, err)
		return
	}
	_ = os.Chmod(dir, 0o777) // an emptyDir's mode: any pod user may write
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	var affinity *corev1.VolumeNodeAffinity
	if node := pvc.Annotations[annSelectedNode]; node != "" {
		affinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname",
				Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: provisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              ptr.Deref(pvc.Spec.StorageClassName, storageClassName),
			VolumeMode:                    pvc.Spec.VolumeMode,
			NodeAffinity:                  affinity,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: dir, Type: ptr.To(corev1.HostPathDirectory)}},
		},
	}
	if _, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			log.Printf("fakelet: provisioning %s/%s: %v", pvc.Namespace, pvc.Name, err)
		}
		return
	}
	log.Printf("fakelet: provisioned %s for claim %s/%s at %s", name, pvc.Namespace, pvc.Name, dir)
}

func (c *controller) reclaim(ctx context.Context, pv *corev1.PersistentVolume) {
	if pv.Annotations[annProvisionedBy] != provisionerName || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.DeletionTimestamp != nil {
		return
	}
	dir := c.pvDir(pv.Name)
	if pv.Spec.HostPath != nil && strings.HasPrefix(pv.Spec.HostPath.Path, c.pvDir("")) {
		_ = os.RemoveAll(dir)
	}
	if err := c.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil &&
		!apierrors.IsNotFound(err) {
		log.Printf("fakelet: deleting released %s: %v", pv.Name, err)
	}
}
