package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// execPod runs a pod's containers as local processes (annotation
// fakelet.drover.test/exec=true): init containers one after another, then all
// containers at once, honouring the pod's restartPolicy. The image is ignored;
// each container needs an explicit command. Output goes to
// <state-dir>/<ns>_<pod>_<uid>/<container>.log.
type execPod struct {
	c               *controller
	pod             *corev1.Pod // as first seen; spec is immutable enough for us
	namespace, name string
	dir             string

	mu        sync.Mutex
	initSt    map[string]corev1.ContainerStatus
	mainSt    map[string]corev1.ContainerStatus
	phase     corev1.PodPhase
	message   string
	startTime metav1.Time
	procs     map[string]*os.Process
	stopping  bool
	grace     time.Duration
	stopCh    chan struct{}
	done      chan struct{}

	volumeDirs map[string]string // host directory of each volume (volumes.go)
}

func newExecPod(c *controller, pod *corev1.Pod) *execPod {
	ep := &execPod{c: c, pod: pod.DeepCopy(), namespace: pod.Namespace, name: pod.Name,
		dir:    filepath.Join(c.stateDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		initSt: map[string]corev1.ContainerStatus{}, mainSt: map[string]corev1.ContainerStatus{},
		phase: corev1.PodPending, startTime: metav1.Now().Rfc3339Copy(),
		procs: map[string]*os.Process{}, stopCh: make(chan struct{}), done: make(chan struct{})}
	if pod.Status.StartTime != nil {
		ep.startTime = *pod.Status.StartTime
	}
	for _, ctr := range pod.Spec.InitContainers {
		ep.initSt[ctr.Name] = containerStatus(ctr, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "PodInitializing"}}, false, 0, pod)
	}
	for _, ctr := range pod.Spec.Containers {
		ep.mainSt[ctr.Name] = containerStatus(ctr, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ContainerCreating"}}, false, 0, pod)
	}
	return ep
}

func (ep *execPod) key() string { return ep.namespace + "/" + ep.name }

func (ep *execPod) notify() { ep.c.queue.Add(ep.key()) }

// stop asks the processes to end: SIGTERM now, SIGKILL after grace.
func (ep *execPod) stop(grace time.Duration) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.stopping {
		return
	}
	ep.stopping, ep.grace = true, grace
	close(ep.stopCh)
	for _, p := range ep.procs {
		_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	}
	if len(ep.procs) > 0 {
		procs := make([]*os.Process, 0, len(ep.procs))
		for _, p := range ep.procs {
			procs = append(procs, p)
		}
		time.AfterFunc(grace, func() {
			for _, p := range procs {
				_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
			}
		})
	}
}

func (ep *execPod) stopped() bool {
	select {
	case <-ep.stopCh:
		return true
	default:
		return false
	}
}

func (ep *execPod) sleep(d time.Duration) {
	select {
	case <-ep.stopCh:
	case <-time.After(d):
	}
}

func (ep *execPod) setState(init bool, ctr corev1.Container, state corev1.ContainerState, restarts int32) {
	ep.mu.Lock()
	m := ep.mainSt
	if init {
		m = ep.initSt
	}
	old := m[ctr.Name]
	s := containerStatus(ctr, state, state.Running != nil && !init, restarts, ep.pod)
	s.LastTerminationState = old.LastTerminationState
	if old.State.Terminated != nil && state.Terminated == nil {
		s.LastTerminationState = corev1.ContainerState{Terminated: old.State.Terminated}
	}
	m[ctr.Name] = s
	ep.mu.Unlock()
	ep.notify()
}

func (ep *execPod) setPhase(p corev1.PodPhase, msg string) {
	ep.mu.Lock()
	ep.phase, ep.message = p, msg
	ep.mu.Unlock()
	ep.notify()
}

func restartWanted(policy corev1.RestartPolicy, code int32) bool {
	return policy == corev1.RestartPolicyAlways || (policy == corev1.RestartPolicyOnFailure && code != 0)
}

func (ep *execPod) run() {
	defer func() {
		close(ep.done)
		ep.notify()
	}()
	if err := os.MkdirAll(ep.dir, 0o755); err != nil {
		ep.setPhase(corev1.PodFailed, err.Error())
		return
	}
	dirs, err := ep.prepareVolumes()
	if err != nil {
		if !ep.stopped() {
			ep.setPhase(corev1.PodFailed, err.Error())
		}
		return
	}
	ep.volumeDirs = dirs
	policy := ep.pod.Spec.RestartPolicy
	for _, ctr := range ep.pod.Spec.InitContainers {
		for restarts := int32(0); ; restarts++ {
			code := ep.runContainer(true, ctr, restarts)
			if ep.stopped() {
				return
			}
			if code == 0 {
				break
			}
			if policy == corev1.RestartPolicyNever {
				ep.setPhase(corev1.PodFailed, fmt.Sprintf("init container %s exited with %d", ctr.Name, code))
				return
			}
			ep.sleep(time.Second)
		}
	}
	ep.setPhase(corev1.PodRunning, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	for _, ctr := range ep.pod.Spec.Containers {
		wg.Add(1)
		go func(ctr corev1.Container) {
			defer wg.Done()
			for restarts := int32(0); ; restarts++ {
				code := ep.runContainer(false, ctr, restarts)
				if ep.stopped() {
					return
				}
				if !restartWanted(policy, code) {
					if code != 0 {
						mu.Lock()
						failed = true
						mu.Unlock()
					}
					return
				}
				ep.sleep(time.Second)
			}
		}(ctr)
	}
	wg.Wait()
	if ep.stopped() {
		return
	}
	if failed {
		ep.setPhase(corev1.PodFailed, "")
	} else {
		ep.setPhase(corev1.PodSucceeded, "")
	}
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// fieldValue resolves the downward-API fields a local process is likely to want.
func (ep *execPod) fieldValue(path string) string {
	p := ep.pod
	switch {
	case path == "metadata.name":
		return p.Name
	case path == "metadata.namespace":
		return p.Namespace
	case path == "metadata.uid":
		return string(p.UID)
	case path == "spec.nodeName":
		return p.Spec.NodeName
	case path == "spec.serviceAccountName":
		return p.Spec.ServiceAccountName
	case path == "status.podIP", path == "status.hostIP", path == "status.podIPs", path == "status.hostIPs":
		return "127.0.0.1"
	case strings.HasPrefix(path, "metadata.labels['"):
		return p.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
	case strings.HasPrefix(path, "metadata.annotations['"):
		return p.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
	}
	return ""
}

func (ep *execPod) environ(ctr corev1.Container) ([]string, map[string]string) {
	vars := map[string]string{}
	order := []string{}
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	if u, err := url.Parse(ep.c.restCfg.Host); err == nil && u.Hostname() != "" {
		set("KUBERNETES_SERVICE_HOST", u.Hostname())
		set("KUBERNETES_SERVICE_PORT", u.Port())
	}
	if ep.c.kubeconfig != "" && !hasServiceAccountMount(ctr) {
		if abs, err := filepath.Abs(ep.c.kubeconfig); err == nil {
			set("KUBECONFIG", abs)
		}
	}
	set("HOSTNAME", ep.pod.Name)
	for _, kv := range ep.serviceLinks() {
		set(kv[0], kv[1])
	}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			set(e.Name, ep.fieldValue(e.ValueFrom.FieldRef.FieldPath))
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			// Read when the container starts, as the kubelet does; a missing Secret or key
			// leaves the variable unset (the kubelet would hold the container instead).
			ref := e.ValueFrom.SecretKeyRef
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sec, err := ep.c.cs.CoreV1().Secrets(ep.namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			cancel()
			if err != nil {
				log.Printf("pod %s: env %s: secret %s: %v", ep.key(), e.Name, ref.Name, err)
			} else if v, ok := sec.Data[ref.Key]; ok {
				set(e.Name, string(v))
			} else {
				log.Printf("pod %s: env %s: secret %s has no key %s", ep.key(), e.Name, ref.Name, ref.Key)
			}
		case e.ValueFrom != nil:
			// ConfigMap/resource refs are not supported; leave unset.
		default:
			set(e.Name, varRef.ReplaceAllStringFunc(e.Value, func(m string) string {
				if v, ok := vars[m[2:len(m)-1]]; ok {
					return v
				}
				return m
			}))
		}
	}
	env := os.Environ()
	if hasServiceAccountMount(ctr) {
		env = withoutVar(env, "KUBECONFIG")
	}
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env, vars
}

// runContainer runs one container to completion and returns its exit code.
func (ep *execPod) runContainer(init bool, ctr corev1.Container, restarts int32) int32 {
	now := func() metav1.Time { return metav1.Now().Rfc3339Copy() }
	terminated := func(code int32, reason, msg string, started metav1.Time) int32 {
		ep.setState(init, ctr, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg, StartedAt: started, FinishedAt: now()}}, restarts)
		return code
	}
	if ep.stopped() {
		return 137
	}
	env, vars := ep.environ(ctr)
	expand := func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := vars[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	var argv []string
	for _, a := range append(append([]string{}, ctr.Command...), ctr.Args...) {
		argv = append(argv, expand(a))
	}
	if len(ctr.Command) == 0 {
		return terminated(127, "StartError", "fakelet exec pods need an explicit command", now())
	}
	argv, newNS, err := ep.withVolumes(ctr, argv)
	if err != nil {
		return terminated(128, "StartError", err.Error(), now())
	}
	logPath := filepath.Join(ep.dir, ctr.Name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return terminated(128, "StartError", err.Error(), now())
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = ep.dir
	if ctr.WorkingDir != "" {
		cmd.Dir = ctr.WorkingDir
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if newNS {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNS
	}

	ep.mu.Lock()
	if ep.stopping {
		ep.mu.Unlock()
		return 137
	}
	err = cmd.Start()
	if err == nil {
		ep.procs[ctr.Name] = cmd.Process
	}
	ep.mu.Unlock()
	if err != nil {
		return terminated(128, "StartError", err.Error(), now())
	}
	started := now()
	log.Printf("fakelet: pod %s container %s: started pid %d: %q (log %s)", ep.key(), ctr.Name,
		cmd.Process.Pid, argv, logPath)
	ep.setState(init, ctr, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}, restarts)

	err = cmd.Wait()
	ep.mu.Lock()
	delete(ep.procs, ctr.Name)
	ep.mu.Unlock()
	code, reason := int32(0), "Completed"
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int32(ws.Signal())
		} else {
			code = int32(xe.ExitCode())
		}
		reason = "Error"
	} else if err != nil {
		code, reason = 128, "Error"
	}
	log.Printf("fakelet: pod %s container %s: exited with %d", ep.key(), ctr.Name, code)
	return terminated(code, reason, "", started)
}

// status renders the pod status from the local processes' states.
func (ep *execPod) status(pod *corev1.Pod) corev1.PodStatus {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	st := basePodStatus(pod, "127.0.0.1")
	st.StartTime = &ep.startTime
	st.Phase, st.Message = ep.phase, ep.message
	st.InitContainerStatuses = nil
	for _, ctr := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, ep.initSt[ctr.Name])
	}
	st.ContainerStatuses = nil
	allReady := len(pod.Spec.Containers) > 0
	for _, ctr := range pod.Spec.Containers {
		s := ep.mainSt[ctr.Name]
		allReady = allReady && s.Ready
		st.ContainerStatuses = append(st.ContainerStatuses, s)
	}
	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	setPodConditions(&st, pod, st.Phase != corev1.PodPending, allReady && !terminal)
	return st
}
