package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Services, for exec pods: the environment variables the kubelet gives a pod for each Service
// of its namespace (enableServiceLinks), and, with --service-proxy, a kube-proxy stand-in.
// There is no packet rewriting here: when the API server allocates cluster IPs from a loopback
// range (env/up's DROVER_K8S_SERVICE_CIDR=loopback), the fakelet listens on each Service's
// clusterIP:port and forwards every connection to a Ready pod that the Service selects (at its
// targetPort on the pod's IP), or refuses it when there is none, as kube-proxy would.
type services struct {
	c      *controller
	lister listersv1.ServiceLister
	proxy  bool

	mu        sync.Mutex
	listeners map[string]net.Listener // "clusterIP:port" -> listener
}

func (c *controller) startServices(ctx context.Context, proxy bool) error {
	f := informers.NewSharedInformerFactory(c.cs, 0)
	inf := f.Core().V1().Services()
	s := &services{c: c, lister: inf.Lister(), proxy: proxy, listeners: map[string]net.Listener{}}
	if proxy {
		sync := func(any) { s.syncListeners() }
		if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: sync, UpdateFunc: func(_, n any) { sync(n) }, DeleteFunc: sync}); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return fmt.Errorf("service informer did not sync")
	}
	c.svc = s
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, l := range s.listeners {
			l.Close()
		}
	}()
	return nil
}

// linkName is the prefix of a Service's environment variables: my-svc -> MY_SVC.
func linkName(svc string) string {
	return strings.ToUpper(strings.ReplaceAll(svc, "-", "_"))
}

// serviceLinks: <NAME>_SERVICE_HOST, _SERVICE_PORT, _SERVICE_PORT_<PORT NAME> and the Docker
// link style <NAME>_PORT... for every Service with a cluster IP in the pod's namespace, in a
// stable order. The API server's own address stays what the fakelet sets (KUBERNETES_*).
func (ep *execPod) serviceLinks() [][2]string {
	s := ep.c.svc
	if s == nil || (ep.pod.Spec.EnableServiceLinks != nil && !*ep.pod.Spec.EnableServiceLinks) {
		return nil
	}
	list, err := s.lister.Services(ep.namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var out [][2]string
	for _, svc := range list {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || len(svc.Spec.Ports) == 0 || svc.Name == "kubernetes" {
			continue
		}
		n := linkName(svc.Name)
		first := svc.Spec.Ports[0]
		out = append(out, [2]string{n + "_SERVICE_HOST", ip},
			[2]string{n + "_SERVICE_PORT", strconv.Itoa(int(first.Port))})
		for _, p := range svc.Spec.Ports {
			if p.Name != "" {
				out = append(out, [2]string{n + "_SERVICE_PORT_" + linkName(p.Name), strconv.Itoa(int(p.Port))})
			}
		}
		proto := strings.ToLower(string(first.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		hp := net.JoinHostPort(ip, strconv.Itoa(int(first.Port)))
		out = append(out, [2]string{n + "_PORT", proto + "://" + hp})
		for _, p := range svc.Spec.Ports {
			pr := strings.ToLower(string(p.Protocol))
			if pr == "" {
				pr = "tcp"
			}
			pfx := fmt.Sprintf("%s_PORT_%d_%s", n, p.Port, strings.ToUpper(pr))
			out = append(out, [2]string{pfx, pr + "://" + net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))},
				[2]string{pfx + "_PROTO", pr}, [2]string{pfx + "_PORT", strconv.Itoa(int(p.Port))},
				[2]string{pfx + "_ADDR", ip})
		}
	}
	return out
}

// syncListeners opens a listener for each TCP port of each Service with a loopback cluster IP
// and closes those of Services that went.
func (s *services) syncListeners() {
	all, err := s.lister.List(labels.Everything())
	if err != nil {
		return
	}
	want := map[string]string{} // addr -> ns/name
	for _, svc := range all {
		ip := net.ParseIP(svc.Spec.ClusterIP)
		if ip == nil || !ip.IsLoopback() || len(svc.Spec.Selector) == 0 {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				want[net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(p.Port)))] = svc.Namespace + "/" + svc.Name
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for addr, l := range s.listeners {
		if _, ok := want[addr]; !ok {
			l.Close()
			delete(s.listeners, addr)
		}
	}
	for addr, key := range want {
		if _, ok := s.listeners[addr]; ok {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			log.Printf("fakelet: service %s: listening on %s: %v", key, addr, err)
			continue
		}
		s.listeners[addr] = l
		log.Printf("fakelet: service %s: proxying %s", key, addr)
		go s.serve(l, key)
	}
}

func (s *services) serve(l net.Listener, key string) {
	_, portStr, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(portStr)
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go s.forward(conn, key, int32(port))
	}
}

// backend picks a Ready pod the Service selects and the pod's address for the port.
func (s *services) backend(key string, port int32) (string, error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	svc, err := s.lister.Services(ns).Get(name)
	if err != nil {
		return "", err
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return "", fmt.Errorf("no port %d", port)
	}
	pods, err := s.c.podLister.Pods(ns).List(labels.SelectorFromSet(svc.Spec.Selector))
	if err != nil {
		return "", err
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" || !podReady(p) {
			continue
		}
		target := int(sp.Port)
		if sp.TargetPort.Type == intstr.String {
			target = 0
			for _, ctr := range p.Spec.Containers {
				for _, cp := range ctr.Ports {
					if cp.Name == sp.TargetPort.StrVal {
						target = int(cp.ContainerPort)
					}
				}
			}
		} else if sp.TargetPort.IntVal != 0 {
			target = int(sp.TargetPort.IntVal)
		}
		if target != 0 {
			return net.JoinHostPort(p.Status.PodIP, strconv.Itoa(target)), nil
		}
	}
	return "", fmt.Errorf("no ready endpoint")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (s *services) forward(conn net.Conn, key string, port int32) {
	defer conn.Close()
	addr, err := s.backend(key, port)
	if err != nil {
		return // kube-proxy rejects connections to a Service without endpoints
	}
	up, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, conn)
	go pipe(conn, up)
	<-done
	<-done
}
