package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Volumes of exec pods. Each volume becomes a directory on this host (an emptyDir, the files
// of a ConfigMap, Secret, projected or downwardAPI volume, the directory behind a PVC's
// PersistentVolume, or a hostPath), and a container with volumeMounts runs in a mount
// namespace of its own where each directory is bind-mounted at its mountPath. So the process
// finds its files at the paths the pod spec names, as in a real pod, and the chart needs no
// test-only paths. The rest of the file system is this host's: a mountPath that does not exist
// here is created as an empty directory (or file) to mount on, as a runtime creates it in the
// container's root.

// mountSpec is what "fakelet mount-exec" sets up before it runs the container's command.
type mountSpec struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// errNotReady: a volume's source is not there yet (PVC not bound, ConfigMap missing); the
// kubelet keeps the pod in ContainerCreating and tries again.
type errNotReady struct{ msg string }

func (e errNotReady) Error() string { return e.msg }

// prepareVolumes makes every volume's directory, waiting while a source is not ready. It
// returns the host directory of each volume by name, or an error when stopped.
func (ep *execPod) prepareVolumes() (map[string]string, error) {
	for warned := false; ; {
		dirs, err := ep.tryVolumes()
		if err == nil {
			return dirs, nil
		}
		if _, wait := err.(errNotReady); !wait {
			return nil, err
		}
		if !warned {
			log.Printf("fakelet: pod %s: waiting for volumes: %v", ep.key(), err)
			warned = true
		}
		ep.setWaiting("ContainerCreating", err.Error())
		ep.sleep(time.Second)
		if ep.stopped() {
			return nil, fmt.Errorf("stopped")
		}
	}
}

// setWaiting shows why the pod's containers have not started.
func (ep *execPod) setWaiting(reason, msg string) {
	ep.mu.Lock()
	changed := false
	for name, s := range ep.mainSt {
		if s.State.Waiting != nil && s.State.Waiting.Message != msg {
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
			ep.mainSt[name] = s
			changed = true
		}
	}
	ep.mu.Unlock()
	if changed {
		ep.notify()
	}
}

func (ep *execPod) tryVolumes() (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dirs := map[string]string{}
	for _, v := range ep.pod.Spec.Volumes {
		dir := filepath.Join(ep.dir, "volumes", v.Name)
		var err error
		switch {
		case v.EmptyDir != nil:
			err = mkdirMode(dir, 0o777)
		case v.HostPath != nil:
			dir = v.HostPath.Path
			if t := ptr.Deref(v.HostPath.Type, corev1.HostPathUnset); t == corev1.HostPathDirectoryOrCreate {
				err = os.MkdirAll(dir, 0o755)
			}
		case v.ConfigMap != nil:
			err = ep.writeConfigMap(ctx, dir, v.ConfigMap.LocalObjectReference.Name, v.ConfigMap.Items,
				modeOr(v.ConfigMap.DefaultMode, 0o644), ptr.Deref(v.ConfigMap.Optional, false))
		case v.Secret != nil:
			err = ep.writeSecret(ctx, dir, v.Secret.SecretName, v.Secret.Items,
				modeOr(v.Secret.DefaultMode, 0o644), ptr.Deref(v.Secret.Optional, false))
		case v.DownwardAPI != nil:
			err = ep.writeDownward(dir, v.DownwardAPI.Items, modeOr(v.DownwardAPI.DefaultMode, 0o644))
		case v.Projected != nil:
			err = ep.writeProjected(ctx, dir, v.Projected)
		case v.PersistentVolumeClaim != nil:
			dir, err = ep.claimDir(ctx, v.PersistentVolumeClaim.ClaimName)
		default:
			return nil, fmt.Errorf("volume %s: this kind of volume is not supported by the fakelet", v.Name)
		}
		if err != nil {
			return nil, err
		}
		dirs[v.Name] = dir
	}
	return dirs, nil
}

func modeOr(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m) & 0o777
}

func mkdirMode(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, mode)
}

// writeFiles replaces dir's content with files (relative path -> content).
func writeFiles(dir string, files map[string][]byte, modes map[string]os.FileMode) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for rel, data := range files {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("volume item path %q leaves the volume", rel)
		}
		p := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(p, modes[rel]); err != nil {
			return err
		}
	}
	return nil
}

// keyFiles picks the files of a ConfigMap's or Secret's data: every key, or the listed items.
func keyFiles(data map[string][]byte, items []corev1.KeyToPath, mode os.FileMode, what string,
	files map[string][]byte, modes map[string]os.FileMode) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k], modes[k] = v, mode
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return errNotReady{fmt.Sprintf("%s has no key %s", what, it.Key)}
		}
		files[it.Path], modes[it.Path] = v, modeOr(it.Mode, mode)
	}
	return nil
}

func (ep *execPod) configMapFiles(ctx context.Context, name string, items []corev1.KeyToPath,
	mode os.FileMode, optional bool, files map[string][]byte, modes map[string]os.FileMode) error {
	cm, err := ep.c.cs.CoreV1().ConfigMaps(ep.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if optional {
			return nil
		}
		return errNotReady{fmt.Sprintf("configmap %q not found", name)}
	}
	if err != nil {
		return errNotReady{err.Error()}
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles(data, items, mode, "configmap "+name, files, modes)
}

func (ep *execPod) secretFiles(ctx context.Context, name string, items []corev1.KeyToPath,
	mode os.FileMode, optional bool, files map[string][]byte, modes map[string]os.FileMode) error {
	sec, err := ep.c.cs.CoreV1().Secrets(ep.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if optional {
			return nil
		}
		return errNotReady{fmt.Sprintf("secret %q not found", name)}
	}
	if err != nil {
		return errNotReady{err.Error()}
	}
	return keyFiles(sec.Data, items, mode, "secret "+name, files, modes)
}

func (ep *execPod) writeConfigMap(ctx context.Context, dir, name string, items []corev1.KeyToPath,
	mode os.FileMode, optional bool) error {
	files, modes := map[string][]byte{}, map[string]os.FileMode{}
	if err := ep.configMapFiles(ctx, name, items, mode, optional, files, modes); err != nil {
		return err
	}
	return writeFiles(dir, files, modes)
}

func (ep *execPod) writeSecret(ctx context.Context, dir, name string, items []corev1.KeyToPath,
	mode os.FileMode, optional bool) error {
	files, modes := map[string][]byte{}, map[string]os.FileMode{}
	if err := ep.secretFiles(ctx, name, items, mode, optional, files, modes); err != nil {
		return err
	}
	return writeFiles(dir, files, modes)
}

func (ep *execPod) downwardFiles(items []corev1.DownwardAPIVolumeFile, mode os.FileMode,
	files map[string][]byte, modes map[string]os.FileMode) {
	for _, it := range items {
		if it.FieldRef == nil {
			continue // resourceFieldRef: not supported
		}
		files[it.Path], modes[it.Path] = []byte(ep.fieldValue(it.FieldRef.FieldPath)), modeOr(it.Mode, mode)
	}
}

func (ep *execPod) writeDownward(dir string, items []corev1.DownwardAPIVolumeFile, mode os.FileMode) error {
	files, modes := map[string][]byte{}, map[string]os.FileMode{}
	ep.downwardFiles(items, mode, files, modes)
	return writeFiles(dir, files, modes)
}

// writeProjected: what the ServiceAccount admission plugin mounts at
// /var/run/secrets/kubernetes.io/serviceaccount (a bound token from the TokenRequest API, the
// kube-root-ca.crt ConfigMap, the namespace) and any other projection of the same sources.
// The token is issued once, when the pod starts.
func (ep *execPod) writeProjected(ctx context.Context, dir string, p *corev1.ProjectedVolumeSource) error {
	files, modes := map[string][]byte{}, map[string]os.FileMode{}
	mode := modeOr(p.DefaultMode, 0o644)
	for _, s := range p.Sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = ep.configMapFiles(ctx, s.ConfigMap.Name, s.ConfigMap.Items, mode,
				ptr.Deref(s.ConfigMap.Optional, false), files, modes)
		case s.Secret != nil:
			err = ep.secretFiles(ctx, s.Secret.Name, s.Secret.Items, mode,
				ptr.Deref(s.Secret.Optional, false), files, modes)
		case s.DownwardAPI != nil:
			ep.downwardFiles(s.DownwardAPI.Items, mode, files, modes)
		case s.ServiceAccountToken != nil:
			var tok string
			tok, err = ep.serviceAccountToken(ctx, s.ServiceAccountToken)
			files[s.ServiceAccountToken.Path], modes[s.ServiceAccountToken.Path] = []byte(tok), mode
		}
		if err != nil {
			return err
		}
	}
	return writeFiles(dir, files, modes)
}

func (ep *execPod) serviceAccountToken(ctx context.Context, p *corev1.ServiceAccountTokenProjection) (string, error) {
	sa := ep.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(ptr.Deref(p.ExpirationSeconds, 3600)),
		BoundObjectRef: &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1",
			Name: ep.name, UID: ep.pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	tr, err := ep.c.cs.CoreV1().ServiceAccounts(ep.namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", errNotReady{fmt.Sprintf("token for serviceaccount %s: %v", sa, err)}
	}
	return tr.Status.Token, nil
}

// claimDir is the directory of the PersistentVolume bound to a claim (hostPath or local).
func (ep *execPod) claimDir(ctx context.Context, claim string) (string, error) {
	pvc, err := ep.c.cs.CoreV1().PersistentVolumeClaims(ep.namespace).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", errNotReady{fmt.Sprintf("persistentvolumeclaim %q: %v", claim, err)}
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return "", errNotReady{fmt.Sprintf("persistentvolumeclaim %q is not bound", claim)}
	}
	pv, err := ep.c.cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", errNotReady{fmt.Sprintf("persistentvolume %q: %v", pvc.Spec.VolumeName, err)}
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, os.MkdirAll(pv.Spec.HostPath.Path, 0o755)
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("persistentvolume %s: only hostPath and local volumes can be mounted by the fakelet", pv.Name)
}

// containerMounts resolves a container's volumeMounts to host sources (subPath included).
func containerMounts(ctr corev1.Container, dirs map[string]string) ([]mountSpec, error) {
	var out []mountSpec
	for _, m := range ctr.VolumeMounts {
		src, ok := dirs[m.Name]
		if !ok {
			return nil, fmt.Errorf("container %s: volumeMount %s names no volume", ctr.Name, m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, mountSpec{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

// mountArgv wraps a container's argv so that it runs under "fakelet mount-exec" with its
// mounts; the caller starts it in a new mount namespace.
func (ep *execPod) mountArgv(ctr corev1.Container, mounts []mountSpec, argv []string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(mounts)
	if err != nil {
		return nil, err
	}
	specFile := filepath.Join(ep.dir, ctr.Name+".mounts.json")
	if err := os.WriteFile(specFile, spec, 0o600); err != nil {
		return nil, err
	}
	return append([]string{self, "mount-exec", specFile, "--"}, argv...), nil
}

// cmdMountExec runs in the container's new mount namespace: it keeps its mounts from
// propagating back to the host, bind-mounts every volume, then becomes the command.
func cmdMountExec(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("usage: fakelet mount-exec SPEC.json -- COMMAND [ARG]...")
	}
	runtime.LockOSThread()
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var mounts []mountSpec
	if err := json.Unmarshal(raw, &mounts); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	// Sources are opened before anything is mounted: a mount on /tmp would hide the sources
	// below it (the fakelet's own directory may be there). Shallow targets first, so that a
	// mount inside another volume lands in it.
	sort.SliceStable(mounts, func(i, j int) bool {
		return strings.Count(filepath.Clean(mounts[i].Target), "/") < strings.Count(filepath.Clean(mounts[j].Target), "/")
	})
	fds := make([]int, len(mounts))
	dirs := make([]bool, len(mounts))
	for i, m := range mounts {
		st, err := os.Stat(m.Source)
		if err != nil {
			return fmt.Errorf("volume source %s: %w", m.Source, err)
		}
		if fds[i], err = syscall.Open(m.Source, unix.O_PATH|syscall.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("volume source %s: %w", m.Source, err)
		}
		dirs[i] = st.IsDir()
	}
	for i, m := range mounts {
		var err error
		if dirs[i] {
			err = os.MkdirAll(m.Target, 0o755)
		} else if _, e := os.Stat(m.Target); os.IsNotExist(e) {
			if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
				var f *os.File
				if f, err = os.OpenFile(m.Target, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					f.Close()
				}
			}
		}
		if err != nil {
			return fmt.Errorf("mount point %s: %w", m.Target, err)
		}
		src := fmt.Sprintf("/proc/self/fd/%d", fds[i])
		if err := syscall.Mount(src, m.Target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("mounting %s on %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := syscall.Mount("", m.Target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("read-only %s: %w", m.Target, err)
			}
		}
	}
	argv := args[2:]
	path := argv[0]
	if !strings.Contains(path, "/") {
		if path, err = lookPath(path); err != nil {
			return err
		}
	}
	return syscall.Exec(path, argv, os.Environ())
}

func lookPath(name string) (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH", name)
}

// withVolumes prepares a container's start: its argv under "fakelet mount-exec" when it mounts
// volumes (then newNS: start it in a new mount namespace).
func (ep *execPod) withVolumes(ctr corev1.Container, argv []string) (out []string, newNS bool, err error) {
	if len(ctr.VolumeMounts) == 0 {
		return argv, false, nil
	}
	mounts, err := containerMounts(ctr, ep.volumeDirs)
	if err != nil {
		return nil, false, err
	}
	out, err = ep.mountArgv(ctr, mounts, argv)
	return out, err == nil, err
}

// serviceAccountPath is where a pod finds its ServiceAccount's token and the cluster's CA.
const serviceAccountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// hasServiceAccountMount: the container gets in-cluster credentials of its own, so it must not
// inherit the fakelet's admin kubeconfig.
func hasServiceAccountMount(ctr corev1.Container) bool {
	for _, m := range ctr.VolumeMounts {
		if filepath.Clean(m.MountPath) == serviceAccountPath {
			return true
		}
	}
	return false
}

func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
