package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

type controller struct {
	cs         kubernetes.Interface
	restCfg    *rest.Config
	kubeconfig string
	allNodes   bool
	stateDir   string

	podLister  listersv1.PodLister
	podIndex   cache.Indexer
	nodeLister listersv1.NodeLister
	queue      workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	execs map[types.UID]*execPod // pods whose containers run as local processes
	svc   *services              // service links and proxy (proxy.go)
	// first time this fakelet saw a simulated pod; start-delay counts from here.
	seen map[types.UID]time.Time
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	kc := kubeconfigFlag(fs)
	allNodes := fs.Bool("all-nodes", false, "act for every Node, not only those labelled "+labelManaged+"=true")
	stateDir := fs.String("state-dir", filepath.Join(os.TempDir(), "fakelet"),
		"directory for exec pods' working directories and logs (<ns>_<pod>_<uid>/<container>.log)")
	workers := fs.Int("workers", 4, "pod sync workers")
	leaseEvery := fs.Duration("lease-interval", 10*time.Second, "node lease renew interval")
	statusEvery := fs.Duration("status-interval", time.Minute, "node status heartbeat interval")
	serviceProxy := fs.Bool("service-proxy", false,
		"forward connections to Services' loopback cluster IPs to their ready pods (proxy.go)")
	provisioner := fs.Bool("provisioner", true,
		"provision hostPath PersistentVolumes for claims of the "+storageClassName+" StorageClass")
	_ = fs.Parse(args)

	cs, cfg, err := clientFor(*kc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*stateDir, 0o755); err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()

	c := &controller{cs: cs, restCfg: cfg, kubeconfig: *kc, allNodes: *allNodes, stateDir: *stateDir,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			50*time.Millisecond, 5*time.Second)),
		execs: map[types.UID]*execPod{}, seen: map[types.UID]time.Time{}}

	// Only pods bound to some node are interesting; binding is drover's (or a
	// test's) business, not ours.
	podFactory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	podInf := podFactory.Core().V1().Pods()
	if err := podInf.Informer().AddIndexers(cache.Indexers{"node": func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return err
	}
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			if !*allNodes {
				o.LabelSelector = labelManaged + "=true"
			}
		}))
	nodeInf := nodeFactory.Core().V1().Nodes()
	c.podLister, c.podIndex = podInf.Lister(), podInf.Informer().GetIndexer()
	c.nodeLister = nodeInf.Lister()

	enqueuePod := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueuePod, UpdateFunc: func(_, n any) { enqueuePod(n) }, DeleteFunc: enqueuePod,
	}); err != nil {
		return err
	}
	// A node appearing (or going) changes whether its pods are ours.
	enqueueNodePods := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		pods, _ := c.podIndex.ByIndex("node", n.Name)
		for _, p := range pods {
			enqueuePod(p)
		}
	}
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueNodePods, DeleteFunc: enqueueNodePods,
	}); err != nil {
		return err
	}

	if err := c.liftNotReadyTaints(ctx, nodeInf.Informer()); err != nil {
		return err
	}
	podFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInf.Informer().HasSynced, nodeInf.Informer().HasSynced) {
		return fmt.Errorf("informer caches did not sync")
	}
	if err := c.startServices(ctx, *serviceProxy); err != nil {
		return err
	}
	if *provisioner {
		if err := c.runProvisioner(ctx); err != nil {
			return fmt.Errorf("provisioner: %w", err)
		}
	}
	log.Printf("fakelet: running (all-nodes=%v, state-dir=%s)", *allNodes, *stateDir)

	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNext(ctx) {
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		lastStatus := time.Time{}
		wait.Until(func() {
			statusToo := time.Since(lastStatus) >= *statusEvery
			if statusToo {
				lastStatus = time.Now()
			}
			nodes, _ := c.nodeLister.List(labels.Everything())
			for _, n := range nodes {
				if err := heartbeatNode(ctx, cs, n, statusToo); err != nil && ctx.Err() == nil {
					log.Printf("fakelet: heartbeat: %v", err)
				}
			}
		}, *leaseEvery, ctx.Done())
	}()

	<-ctx.Done()
	log.Printf("fakelet: shutting down, stopping local processes")
	c.queue.ShutDown()
	c.mu.Lock()
	for _, ep := range c.execs {
		ep.stop(2 * time.Second)
	}
	eps := c.execs
	c.mu.Unlock()
	for _, ep := range eps {
		<-ep.done
	}
	wg.Wait()
	return nil
}

func (c *controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	retry, err := c.sync(ctx, key)
	switch {
	case err != nil:
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			log.Printf("fakelet: pod %s: %v", key, err)
		}
		c.queue.AddRateLimited(key)
	case retry > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, retry)
	default:
		c.queue.Forget(key)
	}
	return true
}

func (c *controller) managesNode(name string) bool {
	_, err := c.nodeLister.Get(name)
	return err == nil
}

// sync brings one pod's status in line with what its (fake or local) containers
// do. It returns a delay after which it wants to look at the pod again.
func (c *controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := c.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forgetGone(ns, name)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	c.forgetGone(ns, name, pod.UID) // an older pod of the same name
	if !c.managesNode(pod.Spec.NodeName) {
		return 0, nil
	}

	c.mu.Lock()
	ep := c.execs[pod.UID]
	c.mu.Unlock()

	if pod.DeletionTimestamp != nil {
		if ep != nil {
			grace := time.Duration(ptr.Deref(pod.DeletionGracePeriodSeconds, 30)) * time.Second
			ep.stop(grace)
			select {
			case <-ep.done:
			default:
				return 200 * time.Millisecond, nil // still terminating
			}
		}
		// The kubelet's part of a graceful delete: confirm with grace 0.
		err := c.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(int64(0)),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, err
		}
		return 0, nil
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, nil
	}

	if ep == nil && pod.Annotations[annExec] == "true" {
		ep = c.startExec(pod)
	}
	var desired corev1.PodStatus
	var retry time.Duration
	if ep != nil {
		desired = ep.status(pod)
	} else {
		desired, retry = c.simulatedStatus(pod)
	}
	if apiequality.Semantic.DeepEqual(desired, pod.Status) {
		return retry, nil
	}
	upd := pod.DeepCopy()
	upd.Status = desired
	if _, err := c.cs.CoreV1().Pods(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	return retry, nil
}

// forgetGone drops local state of pods named ns/name other than keep.
func (c *controller) forgetGone(ns, name string, keep ...types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, ep := range c.execs {
		if ep.namespace == ns && ep.name == name && (len(keep) == 0 || uid != keep[0]) {
			ep.stop(0)
			delete(c.execs, uid)
		}
	}
	if len(keep) == 0 {
		// Simulated pods: the map only holds times; prune lazily.
		if len(c.seen) > 10000 {
			c.seen = map[types.UID]time.Time{}
		}
	}
}

func (c *controller) startExec(pod *corev1.Pod) *execPod {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ep := c.execs[pod.UID]; ep != nil {
		return ep
	}
	ep := newExecPod(c, pod)
	c.execs[pod.UID] = ep
	go ep.run()
	return ep
}

func parseExitCode(s string) (int32, bool) {
	switch s {
	case "", "Succeeded", "succeeded", "true":
		return 0, true
	case "Failed", "failed":
		return 1, true
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// simulatedStatus is the status of a pod whose containers only pretend to run.
func (c *controller) simulatedStatus(pod *corev1.Pod) (corev1.PodStatus, time.Duration) {
	now := metav1.Now().Rfc3339Copy()
	c.mu.Lock()
	first, ok := c.seen[pod.UID]
	if !ok {
		first = now.Time
		c.seen[pod.UID] = first
	}
	c.mu.Unlock()

	st := basePodStatus(pod, "10.244."+fakeIPSuffix(pod.UID))
	if st.StartTime == nil {
		st.StartTime = &now
	}
	if d, err := time.ParseDuration(pod.Annotations[annStartDelay]); err == nil && d > 0 {
		if left := d - time.Since(first); left > 0 && pod.Status.Phase == corev1.PodPending {
			cs := make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
			for _, ctr := range pod.Spec.Containers {
				cs = append(cs, containerStatus(ctr, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "ContainerCreating"}}, false, 0, pod))
			}
			st.ContainerStatuses = cs
			st.Phase = corev1.PodPending
			setPodConditions(&st, pod, false, false)
			return st, left
		}
	}

	started := now
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Running != nil {
			started = s.State.Running.StartedAt
			break
		}
	}
	code, terminate := int32(0), false
	var retry time.Duration
	if v, ok := pod.Annotations[annComplete]; ok && v != "" {
		code, _ = parseExitCode(v)
		terminate = true
	} else if d, err := time.ParseDuration(pod.Annotations[annRunFor]); err == nil {
		if left := d - now.Sub(started.Time); left > 0 {
			retry = left
		} else {
			code, _ = parseExitCode(pod.Annotations[annExitCode])
			terminate = true
		}
	}

	st.InitContainerStatuses = nil
	for _, ctr := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, containerStatus(ctr, corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: started, FinishedAt: started}}, false, 0, pod))
	}
	st.ContainerStatuses = nil
	for _, ctr := range pod.Spec.Containers {
		state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
		if terminate {
			reason := "Completed"
			if code != 0 {
				reason = "Error"
			}
			state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: now}}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(ctr, state, !terminate, 0, pod))
	}
	switch {
	case !terminate:
		st.Phase = corev1.PodRunning
	case code == 0:
		st.Phase = corev1.PodSucceeded
	default:
		st.Phase = corev1.PodFailed
	}
	// Keep timestamps stable if nothing else changed.
	if old := pod.Status.ContainerStatuses; len(old) == len(st.ContainerStatuses) && terminate {
		for i := range old {
			if t := old[i].State.Terminated; t != nil {
				st.ContainerStatuses[i].State.Terminated.FinishedAt = t.FinishedAt
			}
		}
	}
	setPodConditions(&st, pod, true, !terminate)
	return st, retry
}

func fakeIPSuffix(uid types.UID) string {
	h := fnv.New32a()
	h.Write([]byte(uid))
	v := h.Sum32()
	return fmt.Sprintf("%d.%d", (v>>8)%254+1, v%254+1)
}

// basePodStatus copies the pod's status and fills in what the kubelet always sets.
func basePodStatus(pod *corev1.Pod, podIP string) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	st.HostIP = "127.0.0.1"
	st.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	if st.PodIP == "" {
		st.PodIP = podIP
		st.PodIPs = []corev1.PodIP{{IP: podIP}}
	}
	return st
}

func containerStatus(ctr corev1.Container, state corev1.ContainerState, ready bool, restarts int32,
	pod *corev1.Pod) corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name: ctr.Name, Image: ctr.Image, ImageID: "fakelet://" + ctr.Image,
		State: state, Ready: ready, RestartCount: restarts, Started: ptr.To(state.Running != nil),
	}
	if state.Waiting == nil {
		s.ContainerID = "fakelet://" + string(pod.UID) + "/" + ctr.Name
	}
	// Keep a previous termination the kubelet would report.
	for _, old := range append(append([]corev1.ContainerStatus{}, pod.Status.ContainerStatuses...),
		pod.Status.InitContainerStatuses...) {
		if old.Name == ctr.Name {
			s.LastTerminationState = old.LastTerminationState
		}
	}
	return s
}

func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, ok bool, reason string) {
	want := corev1.ConditionFalse
	if ok {
		want = corev1.ConditionTrue
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != want {
				st.Conditions[i].Status = want
				st.Conditions[i].LastTransitionTime = metav1.Now().Rfc3339Copy()
			}
			st.Conditions[i].Reason = reason
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: want, Reason: reason,
		LastTransitionTime: metav1.Now().Rfc3339Copy()})
}

func setPodConditions(st *corev1.PodStatus, pod *corev1.Pod, initialized, ready bool) {
	setCondition(st, corev1.PodScheduled, true, "")
	setCondition(st, corev1.PodReadyToStartContainers, initialized || st.Phase != corev1.PodPending, "")
	setCondition(st, corev1.PodInitialized, initialized, map[bool]string{true: "", false: "ContainersNotInitialized"}[initialized])
	reason := ""
	if !ready {
		reason = "ContainersNotReady"
		if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
			reason = "PodCompleted"
		}
	}
	setCondition(st, corev1.ContainersReady, ready, reason)
	setCondition(st, corev1.PodReady, ready, reason)
	_ = pod
}
