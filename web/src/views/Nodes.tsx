import { useMemo, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type NodeInfo } from "../api";
import { mem, when } from "../format";

// The state family a tile is coloured by.
function family(n: NodeInfo): string {
  const s = n.state.toUpperCase();
  if (s.includes("DRAIN")) return "drain";
  if (s.startsWith("DOWN") || s.includes("*") || s.startsWith("FAIL")) return "down";
  if (s.startsWith("ALLOC")) return "alloc";
  if (s.startsWith("MIX")) return "mix";
  if (s.startsWith("IDLE")) return "idle";
  return "other";
}

function frac(used: number, total: number): number {
  return total > 0 ? Math.min(1, used / total) : 0;
}

// Every node as a small tile (state colour, CPU/memory/GPU bars): 1,000 nodes fit a screen.
export function Nodes({ operator }: { operator: boolean }) {
  const qc = useQueryClient();
  const nodes = useQuery({ queryKey: ["nodes"], queryFn: api.nodes });
  const [partition, setPartition] = useState("");
  const [filter, setFilter] = useState("");
  const [selected, setSelected] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const list = useMemo(
    () =>
      (nodes.data?.nodes ?? []).filter(
        (n) =>
          (!partition || n.partitions.includes(partition)) &&
          (!filter || n.name.includes(filter) || n.state.toLowerCase().includes(filter.toLowerCase())),
      ),
    [nodes.data, partition, filter],
  );
  const totals = useMemo(() => {
    const t = { cpus: 0, alloc_cpus: 0, gpus: 0, alloc_gpus: 0, mem: 0, alloc_mem: 0, byFamily: {} as Record<string, number> };
    for (const n of list) {
      t.cpus += n.cpus;
      t.alloc_cpus += n.alloc_cpus;
      t.gpus += n.gpus;
      t.alloc_gpus += n.alloc_gpus;
      t.mem += n.memory_mb;
      t.alloc_mem += n.alloc_memory_mb;
      const f = family(n);
      t.byFamily[f] = (t.byFamily[f] ?? 0) + 1;
    }
    return t;
  }, [list]);
  const node = nodes.data?.nodes.find((n) => n.name === selected) ?? null;

  const act = useMutation({
    mutationFn: async ({ name, what, reason }: { name: string; what: "drain" | "resume"; reason?: string }) =>
      what === "drain" ? api.drain(name, reason ?? "") : api.resume(name),
    onSuccess: (_, v) => {
      setMessage(`${v.name}: ${v.what} done`);
      void qc.invalidateQueries({ queryKey: ["nodes"] });
    },
    onError: (e) => setMessage(e.message),
  });

  return (
    <section className="nodes">
      <div className="filters">
        <label>
          Partition
          <select value={partition} onChange={(e) => setPartition(e.target.value)}>
            <option value="">All</option>
            {(nodes.data?.partitions ?? []).map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name or state
          <input value={filter} onChange={(e) => setFilter(e.target.value)} />
        </label>
        <span className="count">
          {list.length} nodes ·{" "}
          {Object.entries(totals.byFamily)
            .map(([f, c]) => `${c} ${f}`)
            .join(" · ")}
        </span>
      </div>
      <div className="summary">
        <Meter label="CPUs" used={totals.alloc_cpus} total={totals.cpus} />
        <Meter label="Memory" used={totals.alloc_mem} total={totals.mem} fmt={mem} />
        {totals.gpus > 0 && <Meter label="GPUs" used={totals.alloc_gpus} total={totals.gpus} />}
      </div>
      {nodes.error && <p className="error">{nodes.error.message}</p>}
      <div className="node-grid" data-testid="node-grid">
        {list.map((n) => (
          <button
            key={n.name}
            className={`tile ${family(n)}${n.name === selected ? " selected" : ""}`}
            data-node={n.name}
            data-state={n.state}
            title={`${n.name} ${n.state}${n.reason ? " — " + n.reason : ""}\nCPU ${n.alloc_cpus}/${n.cpus} · mem ${mem(n.alloc_memory_mb)}/${mem(n.memory_mb)}${n.gpus ? ` · GPU ${n.alloc_gpus}/${n.gpus}` : ""}`}
            onClick={() => setSelected(n.name === selected ? null : n.name)}
          >
            <span className="tile-name">{n.name}</span>
            <span className="bar cpu" style={{ width: `${frac(n.alloc_cpus, n.cpus) * 100}%` }} />
            <span className="bar mem" style={{ width: `${frac(n.alloc_memory_mb, n.memory_mb) * 100}%` }} />
            {n.gpus > 0 && <span className="bar gpu" style={{ width: `${frac(n.alloc_gpus, n.gpus) * 100}%` }} />}
          </button>
        ))}
      </div>
      <div className="legend">
        {["idle", "mix", "alloc", "drain", "down"].map((f) => (
          <span key={f} className={`tile-swatch ${f}`}>
            {f}
          </span>
        ))}
        <span>bars: CPU · memory · GPU allocated</span>
      </div>
      {node && (
        <div className="card node-detail" data-testid="node-detail">
          <h4>
            {node.name} <span className="state">{node.state}</span>
          </h4>
          <dl>
            <dt>Reason</dt>
            <dd>{node.reason ? `${node.reason} (${when(node.reason_time)})` : "—"}</dd>
            <dt>CPUs</dt>
            <dd>
              {node.alloc_cpus} of {node.cpus} allocated{node.cpu_load >= 0 ? `, load ${node.cpu_load.toFixed(2)}` : ""}
            </dd>
            <dt>Memory</dt>
            <dd>
              {mem(node.alloc_memory_mb)} of {mem(node.memory_mb)}
            </dd>
            <dt>GPUs</dt>
            <dd>{node.gpus ? `${node.alloc_gpus} of ${node.gpus} (${node.gres})` : "—"}</dd>
            <dt>Jobs</dt>
            <dd>{node.running_jobs}</dd>
            <dt>Partitions</dt>
            <dd>{node.partitions.join(", ")}</dd>
            <dt>Features</dt>
            <dd>{node.features.join(", ") || "—"}</dd>
          </dl>
          {operator && (
            <div className="actions">
              {!node.state.includes("DRAIN") && (
                <button
                  data-testid="drain"
                  onClick={() => {
                    const reason = window.prompt(`Drain ${node.name}: reason?`);
                    if (reason) act.mutate({ name: node.name, what: "drain", reason });
                  }}
                >
                  Drain
                </button>
              )}
              {(node.state.includes("DRAIN") || node.state.startsWith("DOWN")) && (
                <button data-testid="resume" onClick={() => act.mutate({ name: node.name, what: "resume" })}>
                  Resume
                </button>
              )}
              {message && <span className="message">{message}</span>}
            </div>
          )}
        </div>
      )}
    </section>
  );
}

function Meter({ label, used, total, fmt }: { label: string; used: number; total: number; fmt?: (n: number) => string }) {
  const f = fmt ?? ((n: number) => n.toLocaleString());
  return (
    <div className="meter">
      <span>
        {label}: {f(used)} / {f(total)}
      </span>
      <span className="meter-bar">
        <span style={{ width: `${frac(used, total) * 100}%` }} />
      </span>
    </div>
  );
}
