import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { createColumnHelper, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { GridTable, JobLink } from "./GridTable";
import { api, type K8sDecision, type K8sNodeSet, type K8sPod } from "../api";
import { duration, when } from "../format";

// The drover node states a NodeSet's pods are in, in the Nodes view's colours.
const STATE_ORDER = ["idle", "mixed", "allocated", "draining", "drained", "down", "future", "unregistered"];
function tileClass(state: string): string {
  const s = state.replace("*", "");
  if (s === "idle") return "idle";
  if (s === "mixed") return "mix";
  if (s === "allocated") return "alloc";
  if (s === "drained" || s === "draining") return "drain";
  if (s === "down") return "down";
  return "other";
}

const nsCol = createColumnHelper<K8sNodeSet>();
const podCol = createColumnHelper<K8sPod>();
const decCol = createColumnHelper<K8sDecision>();

// NodeSets, their agent pods and the operator's size decisions, from what its last pass saw;
// refetched when the controller's change feed says the operator's view moved.
export function Kubernetes() {
  const k8s = useQuery({ queryKey: ["k8s"], queryFn: api.k8s, refetchInterval: 30000 });
  const [only, setOnly] = useState<string>("");
  const now = k8s.data?.now ?? Math.floor(Date.now() / 1000);
  const nodesets = useMemo(() => k8s.data?.nodesets ?? [], [k8s.data]);
  const pods = useMemo(() => (k8s.data?.pods ?? []).filter((p) => !only || p.nodeset === only), [k8s.data, only]);
  const decisions = useMemo(
    () => [...(k8s.data?.decisions ?? [])].filter((d) => !only || d.nodeset === only).reverse(),
    [k8s.data, only],
  );

  const nsColumns = useMemo(
    () => [
      nsCol.accessor("name", {
        header: "NodeSet",
        cell: (c) => (
          <button className="link" onClick={() => setOnly((o) => (o === c.getValue() ? "" : c.getValue()))}>
            {c.getValue()}
          </button>
        ),
      }),
      nsCol.display({
        id: "replicas",
        header: "Ready / desired",
        cell: (c) => {
          const n = c.row.original;
          return (
            <span data-testid="replicas">
              {n.ready_replicas} / {n.replicas ?? "?"}
            </span>
          );
        },
      }),
      nsCol.display({
        id: "autoscaling",
        header: "Autoscaling",
        cell: (c) => {
          const a = c.row.original.autoscaling;
          return a ? `${a.min_replicas}–${a.max_replicas}` : <span className="muted">off</span>;
        },
      }),
      nsCol.accessor("cost", { header: "Cost", cell: (c) => c.getValue() ?? "" }),
      nsCol.display({
        id: "update",
        header: "Update",
        cell: (c) => {
          const n = c.row.original;
          return n.update_strategy === "RollingUpdate" ? `rolling, ${n.max_unavailable} at a time` : (n.update_strategy ?? "");
        },
      }),
      nsCol.display({
        id: "states",
        header: "Drover nodes",
        cell: (c) => (
          <span className="legend inline">
            {STATE_ORDER.filter((s) => c.row.original.node_states[s]).map((s) => (
              <span key={s} className={"tile-swatch " + tileClass(s)}>
                {c.row.original.node_states[s]} {s}
              </span>
            ))}
          </span>
        ),
      }),
      nsCol.display({
        id: "conditions",
        header: "Conditions",
        cell: (c) => {
          const n = c.row.original;
          if (n.error) return <span className="error">{n.error}</span>;
          return (
            <span className="why">
              {n.deleting && <span className="state state-cancelled">deleting</span>}{" "}
              {n.conditions.map((k) => (
                <span
                  key={k.type}
                  className={"cond " + (k.status === "True" ? (k.type === "Degraded" ? "bad" : "on") : "off")}
                  title={[k.reason, k.message].filter(Boolean).join(": ")}
                >
                  {k.type}
                  {k.status === "True" && k.reason ? ` (${k.reason})` : ""}
                </span>
              ))}
            </span>
          );
        },
      }),
    ],
    [],
  );
  const podColumns = useMemo(
    () => [
      podCol.accessor("name", { header: "Pod" }),
      podCol.accessor("phase", {
        header: "Phase",
        cell: (c) => (
          <span className={"state state-" + (c.getValue() === "Running" ? "running" : c.getValue() === "Pending" ? "pending" : "failed")}>
            {c.getValue() || "?"}
            {c.row.original.deleting ? ", terminating" : ""}
          </span>
        ),
      }),
      podCol.accessor("k8s_node", { header: "Kubernetes node" }),
      podCol.accessor("node_state", {
        header: "Drover node",
        cell: (c) => <span className={"tile-swatch " + tileClass(c.getValue())}>{c.getValue()}</span>,
      }),
      podCol.accessor("reason", { header: "Reason", cell: (c) => <span className="why">{c.getValue()}</span> }),
      podCol.display({
        id: "busy",
        header: "Jobs",
        cell: (c) => {
          const p = c.row.original;
          if (!p.busy) return <span className="muted">none</span>;
          return (
            <span>
              {p.jobs} {p.protected ? <span className="cond on" title="a PodDisruptionBudget keeps it from eviction">protected</span> : null}
            </span>
          );
        },
      }),
      podCol.accessor("age_s", { header: "Age", cell: (c) => duration(c.getValue()) }),
    ],
    [],
  );
  const decColumns = useMemo(
    () => [
      decCol.accessor("time", { header: "When", cell: (c) => when(c.getValue(), now) }),
      decCol.accessor("nodeset", { header: "NodeSet" }),
      decCol.display({
        id: "size",
        header: "Replicas",
        cell: (c) => {
          const d = c.row.original;
          return d.from === d.to ? `${d.to} (held)` : `${d.from} → ${d.to}`;
        },
      }),
      decCol.accessor("reason", { header: "Why", cell: (c) => <span className="why">{c.getValue()}</span> }),
      decCol.accessor("jobs", {
        header: "For jobs",
        cell: (c) => (
          <span>
            {c.getValue().map((id, i) => (
              <span key={id}>
                {i > 0 ? ", " : ""}
                <JobLink jobId={id} label={id} />
              </span>
            ))}
          </span>
        ),
      }),
    ],
    [now],
  );
  const nsTable = useReactTable({ data: nodesets, columns: nsColumns, getCoreRowModel: getCoreRowModel() });
  const podTable = useReactTable({ data: pods, columns: podColumns, getCoreRowModel: getCoreRowModel() });
  const decTable = useReactTable({ data: decisions, columns: decColumns, getCoreRowModel: getCoreRowModel() });

  if (k8s.error) return <p className="error">{k8s.error.message}</p>;
  if (!k8s.data) return <p className="loading">Loading…</p>;
  if (!k8s.data.enabled)
    return <p className="empty">This controller does not run the Kubernetes operator (DroverK8sNamespace is not set).</p>;
  return (
    <section className="kubernetes">
      <p className="section-note">
        NodeSets in namespace <code>{k8s.data.namespace}</code> as the operator saw them {when(k8s.data.time ?? 0, now)};
        each pod runs the drover node of its name. {only && <>Showing NodeSet <b>{only}</b> only (click it again for all).</>}
      </p>
      {nodesets.length === 0 ? (
        <p className="empty">No NodeSets.</p>
      ) : (
        <GridTable table={nsTable} className="grid-table small" testId="nodesets" rowProps={(n) => ({ "data-nodeset": n.name })} />
      )}
      <h3>Pods</h3>
      {pods.length === 0 ? (
        <p className="empty">No pods.</p>
      ) : (
        <GridTable table={podTable} className="grid-table small" testId="pods" rowProps={(p) => ({ "data-pod": p.name })} />
      )}
      <h3>Autoscaler decisions</h3>
      {decisions.length === 0 ? (
        <p className="empty">No size decisions yet.</p>
      ) : (
        <GridTable
          table={decTable}
          className="grid-table small"
          testId="decisions"
          rowProps={(d) => ({ "data-decision": `${d.nodeset}@${d.time}` })}
        />
      )}
    </section>
  );
}
