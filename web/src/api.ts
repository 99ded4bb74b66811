// The controller's dashboard API (/ui/api/) and REST API (/slurm/), authenticated with the JWT
// from `scontrol token`, kept for this tab only (sessionStorage).

const TOKEN_KEY = "drover.token";

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token.trim());
  else sessionStorage.removeItem(TOKEN_KEY);
}

// `drover up` prints /ui/#token=...: taken once, then removed from the address bar (and history).
export function takeTokenFromFragment(): void {
  const m = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (m) {
    setToken(decodeURIComponent(m[1]));
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
}

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = getToken();
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token) headers["X-SLURM-USER-TOKEN"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data: unknown = null;
  try {
    data = await res.json();
  } catch {
    // not JSON: the status says it
  }
  if (!res.ok) {
    const d = data as { error?: string; errors?: { description?: string }[] } | null;
    const msg = d?.error ?? d?.errors?.[0]?.description ?? `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, msg);
  }
  return data as T;
}

export interface Who {
  user: string;
  uid: number;
  operator: boolean;
  private_jobs: boolean;
  k8s: boolean; // the Kubernetes operator runs: the Kubernetes view is shown
  cluster: string;
}

export interface JobRow {
  job_id: number;
  id: string;
  name: string;
  user: string;
  account: string;
  partition: string;
  state: string;
  completing: boolean;
  reason: string;
  reason_text: string;
  priority: number;
  submit_time: number;
  start_time: number;
  end_time: number;
  expected_start: number;
  time_limit_min: number;
  nodes: string;
  cpus: number;
  gpus: number;
  held: number;
}

export interface JobPage {
  total: number;
  offset: number;
  limit: number;
  jobs: JobRow[];
  now: number;
  version: number;
}

export interface JobQuery {
  user?: string;
  account?: string;
  partition?: string;
  name?: string;
  state?: string;
  sort: string;
  order: "asc" | "desc";
  offset: number;
  limit: number;
}

export interface Step {
  id: number;
  name: string;
  state: string;
  start_time: number;
  nodelist: string;
  ntasks: number;
  cpus: number;
  mem_mb: number;
  gpus: number;
  command: string;
}

export interface JobDetail {
  id: number;
  display_id: string;
  state: string;
  user: string;
  group: string;
  partition: string;
  reason: string;
  reason_text: string;
  priority: number;
  submit_time: number;
  start_time: number;
  end_time: number;
  expected_start: number;
  time_limit_min: number;
  nodelist: string;
  batch_host: string;
  exit_code: number;
  run_time: number;
  cpus: number;
  gpus: number;
  held: number;
  std_out_path?: string;
  std_err_path?: string;
  steps: Step[];
  alloc: { node: string; cpus: number; mem_mb: number; gres?: { name: string; type: string; count: number }[] }[];
  spec: Record<string, unknown>;
  may_act: boolean;
  may_release_admin_hold: boolean;
}

export interface NodeInfo {
  name: string;
  state: string;
  state_short: string;
  reason: string;
  reason_time: number;
  cpus: number;
  alloc_cpus: number;
  memory_mb: number;
  alloc_memory_mb: number;
  gpus: number;
  alloc_gpus: number;
  gres: string;
  features: string[];
  cpu_load: number;
  running_jobs: number;
  partitions: string[];
}

export interface NodesReply {
  nodes: NodeInfo[];
  partitions: { name: string; state: string; total_nodes: number; total_cpus: number }[];
}

export interface HistoryRow {
  job_id: number;
  id: string;
  name: string;
  user: string;
  account: string;
  partition: string;
  state: string;
  submit_time: number;
  start_time: number;
  end_time: number;
  elapsed: number;
  exit_code: number;
  signal: number;
  time_limit_min: number;
  nodes: string;
  cpus: number;
  gpus: number;
}

export interface HistoryQuery {
  user?: string;
  account?: string;
  partition?: string;
  name?: string;
  state?: string;
  start: number;
  end: number;
  offset: number;
  limit: number;
}

export interface HistoryPage {
  total: number;
  offset: number;
  limit: number;
  start: number;
  end: number;
  jobs: HistoryRow[];
}

// A job's accounting record, as sacct reads it.
export interface AcctStep {
  name: string;
  state: string;
  exit_code: number;
  exit_signal: number;
  start_time: number;
  end_time: number;
  nodelist: string;
  ncpus: number;
  ntasks: number;
  job_name: string;
  alloc_tres: string;
  max_rss_kb: number;
}

export interface AcctRecord {
  job_id: number;
  name: string;
  user: string;
  account: string;
  qos: string;
  partition: string;
  state: string;
  reason: string;
  submit_time: number;
  start_time: number;
  end_time: number;
  elapsed: number;
  exit_code: number;
  exit_signal: number;
  alloc_cpus: number;
  alloc_tres: string;
  req_tres: string;
  nodelist: string;
  gpus: number;
  restarts: number;
  steps: AcctStep[];
}

export interface OutputTail {
  path: string;
  error?: string;
  size?: number;
  offset?: number;
  truncated?: boolean;
  text?: string;
}

export interface UsageSeries {
  account: string;
  user: string;
  cpu_s: number[];
  gpu_s: number[];
  cpu_total_s: number;
  gpu_total_s: number;
}

export interface UsageReply {
  start: number;
  end: number;
  step: number;
  now: number;
  buckets: number[];
  series: UsageSeries[];
}

export interface ShareRow {
  id: number;
  account: string;
  user: string;
  parent: string;
  raw_shares: number | "parent" | null;
  norm_shares: number;
  raw_usage: number;
  norm_usage: number;
  effective_usage: number;
  fairshare: number;
  level_fs: number;
}

export interface FairshareReply {
  priority_type: string;
  fair_tree: boolean;
  rows: ShareRow[];
}

export interface Reservation {
  name: string;
  start: number;
  end: number;
  nodes: string;
  node_cnt: number;
  core_cnt: number;
  cpus: number;
  partition: string;
  flags: string;
  users: string;
  accounts: string;
  state: string;
}

function params(q: object): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, String(v));
  return p;
}

export interface K8sCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface K8sNodeSet {
  name: string;
  replicas: number | null; // spec.replicas (desired); null when the NodeSet does not parse
  status_replicas: number;
  ready_replicas: number;
  updated_replicas: number;
  autoscaling: { min_replicas: number; max_replicas: number; idle_timeout_s: number } | null;
  cost?: number;
  update_strategy?: string;
  max_unavailable?: string;
  workload_protection?: boolean;
  partitions?: string[];
  deleting: boolean;
  node_states: Record<string, number>;
  conditions: K8sCondition[];
  error: string;
}

export interface K8sPod {
  name: string;
  nodeset: string;
  phase: string;
  ready: boolean;
  k8s_node: string;
  node: string;
  node_state: string;
  reason: string;
  jobs: number;
  busy: boolean;
  protected: boolean;
  deleting: boolean;
  created: number;
  age_s: number;
}

export interface K8sDecision {
  time: number;
  nodeset: string;
  from: number;
  to: number;
  reason: string;
  jobs: number[];
}

export interface K8sReply {
  enabled: boolean;
  namespace?: string;
  time?: number;
  version?: number;
  now?: number;
  nodesets?: K8sNodeSet[];
  pods?: K8sPod[];
  decisions?: K8sDecision[];
}

export const api = {
  whoami: () => request<Who>("GET", "/ui/api/whoami"),
  jobs: (q: JobQuery) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, String(v));
    return request<JobPage>("GET", `/ui/api/jobs?${p}`);
  },
  job: (id: number) => request<JobDetail>("GET", `/ui/api/job/${id}`),
  accounting: (id: number) => request<AcctRecord>("GET", `/ui/api/job/${id}/accounting`),
  output: (id: number, stream: "stdout" | "stderr", bytes?: number) =>
    request<OutputTail>("GET", `/ui/api/job/${id}/output?${params({ stream, bytes })}`),
  history: (q: HistoryQuery) => request<HistoryPage>("GET", `/ui/api/history?${params(q)}`),
  usage: (q: { start?: number; end?: number; step: "hour" | "day" }) =>
    request<UsageReply>("GET", `/ui/api/usage?${params(q)}`),
  fairshare: () => request<FairshareReply>("GET", "/ui/api/fairshare"),
  reservations: () => request<{ now: number; reservations: Reservation[] }>("GET", "/ui/api/reservations"),
  k8s: () => request<K8sReply>("GET", "/ui/api/k8s"),
  hold: (id: number) => request<{ ok: boolean }>("POST", `/ui/api/job/${id}/hold`),
  release: (id: number) => request<{ ok: boolean }>("POST", `/ui/api/job/${id}/release`),
  // Cancel is the REST API's own (slurmrestd's DELETE /job/{id}).
  cancel: (id: number) => request<unknown>("DELETE", `/slurm/v0.0.44/job/${id}`),
  nodes: () => request<NodesReply>("GET", "/ui/api/nodes"),
  drain: (name: string, reason: string) =>
    request<{ ok: boolean }>("POST", `/ui/api/node/${encodeURIComponent(name)}/drain`, { reason }),
  resume: (name: string) =>
    request<{ ok: boolean }>("POST", `/ui/api/node/${encodeURIComponent(name)}/resume`, {}),
};

export type ServerEvent =
  | { type: "hello"; data: { jobs: number; nodes: number; k8s?: number } }
  | { type: "k8s"; data: { version: number } }
  | { type: "jobs"; data: { version: number; ids?: number[] } }
  | { type: "nodes"; data: { version: number } };

// The controller's change feed (Server-Sent Events) read with fetch, so that the token goes in
// a header rather than the URL. Reconnects with backoff until `signal` aborts.
export async function followEvents(
  onEvent: (e: ServerEvent) => void,
  onLive: (live: boolean) => void,
  signal: AbortSignal,
): Promise<void> {
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const token = getToken();
      const res = await fetch("/ui/api/events", {
        headers: token ? { "X-SLURM-USER-TOKEN": token, Accept: "text/event-stream" } : {},
        signal,
      });
      if (!res.ok || !res.body) throw new ApiError(res.status, res.statusText);
      onLive(true);
      delay = 1000;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end: number;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let type = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) type = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
          }
          if (!data) continue;
          try {
            onEvent({ type, data: JSON.parse(data) } as ServerEvent);
          } catch {
            // an event this page does not know
          }
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status === 401) {
        onLive(false);
        return;
      }
    }
    onLive(false);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 15000);
  }
}
