// Path routing under /ui/ (the controller answers index.html for every app path), and the
// sections the navigation shows. A later view (Fair share, Usage, Reservations, Kubernetes
// NodeSets) is one more entry in SECTIONS and one component: the shell does not change.
import { useSyncExternalStore } from "react";

export const BASE = "/ui";

function subscribe(cb: () => void) {
  window.addEventListener("popstate", cb);
  return () => window.removeEventListener("popstate", cb);
}

export function usePath(): string {
  const p = useSyncExternalStore(subscribe, () => window.location.pathname);
  return p.startsWith(BASE) ? p.slice(BASE.length) || "/" : p;
}

export function useSearch(): URLSearchParams {
  const s = useSyncExternalStore(subscribe, () => window.location.search);
  return new URLSearchParams(s);
}

// In-app navigation: `replace` for filter changes (no history entry per keystroke).
export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : BASE + to;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export interface Section {
  id: string;
  label: string;
  path: string; // the section's root; its sub-paths (job/123) belong to it
  match: (path: string) => boolean;
  operatorOnly?: boolean;
  k8sOnly?: boolean; // shown only when the controller runs the Kubernetes operator
}

export const SECTIONS: Section[] = [
  { id: "queue", label: "Queue", path: "/queue", match: (p) => p === "/" || p.startsWith("/queue") || p.startsWith("/job/") },
  { id: "history", label: "History", path: "/history", match: (p) => p.startsWith("/history") },
  { id: "nodes", label: "Nodes", path: "/nodes", match: (p) => p.startsWith("/nodes") },
  { id: "fairshare", label: "Fair share", path: "/fairshare", match: (p) => p.startsWith("/fairshare") },
  { id: "usage", label: "Usage", path: "/usage", match: (p) => p.startsWith("/usage") },
  { id: "reservations", label: "Reservations", path: "/reservations", match: (p) => p.startsWith("/reservations") },
  { id: "kubernetes", label: "Kubernetes", path: "/kubernetes", match: (p) => p.startsWith("/kubernetes"), k8sOnly: true },
];
