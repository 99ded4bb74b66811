import { useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { createColumnHelper, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { GridTable } from "./GridTable";
import { api, type ShareRow } from "../api";

type Row = ShareRow & { depth: number };
const col = createColumnHelper<Row>();

function num(x: number, digits = 6): string {
  return Number.isFinite(x) ? x.toFixed(digits) : "";
}

// The account/user tree with shares, usage and the fair-share factor, as sshare computes
// them (the controller's own numbers, not recomputed here).
export function FairShare() {
  const shares = useQuery({ queryKey: ["fairshare"], queryFn: api.fairshare, refetchInterval: 30000 });
  // sshare's rows come in tree order; the depth is the length of the parent chain.
  const rows = useMemo<Row[]>(() => {
    const all = shares.data?.rows ?? [];
    const depthOf = new Map<string, number>();
    return all.map((r) => {
      if (r.user) return { ...r, depth: (depthOf.get(r.account) ?? 0) + 1 };
      const depth = r.account === "root" || !r.parent ? 0 : (depthOf.get(r.parent) ?? 0) + 1;
      depthOf.set(r.account, depth);
      return { ...r, depth };
    });
  }, [shares.data]);
  const maxUsage = Math.max(1, ...rows.filter((r) => r.account === "root" && !r.user).map((r) => r.raw_usage));

  const columns = useMemo(
    () => [
      col.display({
        id: "name",
        header: "Account / User",
        cell: (c) => (
          <span style={{ paddingLeft: c.row.original.depth * 16 }} className={c.row.original.user ? "" : "acct"}>
            {c.row.original.user ? c.row.original.user : c.row.original.account}
          </span>
        ),
      }),
      col.accessor("raw_shares", {
        header: "RawShares",
        cell: (c) => (c.getValue() === null ? "" : String(c.getValue())),
      }),
      col.accessor("norm_shares", { header: "NormShares", cell: (c) => num(c.getValue()) }),
      col.accessor("raw_usage", {
        header: "RawUsage (CPU-s)",
        cell: (c) => (
          <div className="bar-cell">
            {Math.round(c.getValue()).toLocaleString()}
            <span className="meter-bar">
              <span style={{ width: `${(100 * c.getValue()) / maxUsage}%` }} />
            </span>
          </div>
        ),
      }),
      col.accessor("effective_usage", { header: "EffectvUsage", cell: (c) => num(c.getValue()) }),
      col.accessor("fairshare", {
        header: "FairShare",
        cell: (c) => (c.row.original.user || shares.data?.fair_tree ? num(c.getValue()) : ""),
      }),
      col.accessor("level_fs", {
        header: "LevelFS",
        cell: (c) => (shares.data?.fair_tree && c.row.original.account !== "root" ? num(c.getValue()) : ""),
      }),
    ],
    [maxUsage, shares.data?.fair_tree],
  );
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel() });

  return (
    <section className="fairshare">
      <p className="section-note">
        The association tree as <code>sshare -l</code> shows it ({shares.data?.priority_type}
        {shares.data?.fair_tree ? ", Fair Tree" : ""}). A user's FairShare is their priority's fair-share factor: 1 is
        the most deserving, 0 the least.
      </p>
      {shares.error && <p className="error">{shares.error.message}</p>}
      {shares.data && rows.length === 0 && (
        <p className="empty">No fair share: the cluster runs priority/basic, or has no associations.</p>
      )}
      {rows.length > 0 && (
        <GridTable table={table} className="grid-table small" testId="fairshare" rowProps={(r) => ({ "data-account": r.account, "data-user": r.user })} />
      )}
    </section>
  );
}
