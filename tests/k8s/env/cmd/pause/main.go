// pause: the sandbox ("infra") container of the real-kubelet mode of env/up. A pod's
// namespaces live as long as this process; it sleeps until SIGTERM/SIGINT and reaps the
// zombies it inherits as the pod's PID 1. There is no registry here, so
//
//	pause --oci-archive FILE NAME
//
// writes an OCI image layout tar holding this very binary as /pause, which `ctr images
// import` loads into containerd under NAME (containerd's sandbox_image).
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "--oci-archive" {
		if err := writeArchive(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "pause:", err)
			os.Exit(1)
		}
		return
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// writeArchive writes an OCI image layout (one uncompressed layer with /pause) as a tar.
func writeArchive(path, name string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	// Fixed times and owners: the same binary gives the same image.
	epoch := time.Unix(0, 0)
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	if err := lw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(bin)), ModTime: epoch,
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := lw.Write(bin); err != nil {
		return err
	}
	if err := lw.Close(); err != nil {
		return err
	}
	layerBytes := layer.Bytes()
	config, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/pause"}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{digest(layerBytes)}},
	})
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{"application/vnd.oci.image.config.v1+json", digest(config), len(config), nil},
		"layers": []descriptor{{"application/vnd.oci.image.layer.v1.tar", digest(layerBytes),
			len(layerBytes), nil}},
	})
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []descriptor{{"application/vnd.oci.image.manifest.v1+json", digest(manifest), len(manifest),
			map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name}}},
	})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := tar.NewWriter(f)
	add := func(name string, b []byte) error {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := w.Write(b)
		return err
	}
	blob := func(b []byte) string { return "blobs/sha256/" + digest(b)[len("sha256:"):] }
	for _, e := range []struct {
		name string
		b    []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blob(manifest), manifest},
		{blob(config), config},
		{blob(layerBytes), layerBytes},
	} {
		if err := add(e.name, e.b); err != nil {
			return err
		}
	}
	return w.Close()
}
