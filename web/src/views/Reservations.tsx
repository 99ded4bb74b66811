import { useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { createColumnHelper, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { GridTable } from "./GridTable";
import { api, type Reservation } from "../api";
import { duration, when } from "../format";

const col = createColumnHelper<Reservation>();

// Reservations (scontrol show reservation) with each one's window on a shared time axis: from
// an hour ago to the last one's end, at most two weeks ahead.
export function Reservations() {
  const resv = useQuery({ queryKey: ["reservations"], queryFn: api.reservations, refetchInterval: 30000 });
  const now = resv.data?.now ?? Math.floor(Date.now() / 1000);
  const list = useMemo(() => [...(resv.data?.reservations ?? [])].sort((a, b) => a.start - b.start), [resv.data]);
  const axis = useMemo(() => {
    const from = Math.min(now - 3600, ...list.map((r) => r.start));
    const to = Math.min(now + 14 * 86400, Math.max(now + 3600, ...list.map((r) => r.end)));
    return { from, to };
  }, [list, now]);
  const pos = (t: number) => `${(100 * (Math.min(Math.max(t, axis.from), axis.to) - axis.from)) / (axis.to - axis.from)}%`;

  const columns = useMemo(
    () => [
      col.accessor("name", { header: "Name" }),
      col.accessor("state", { header: "State" }),
      col.accessor("start", { header: "Start", cell: (c) => when(c.getValue(), now) }),
      col.accessor("end", { header: "End", cell: (c) => when(c.getValue(), now) }),
      col.display({ id: "duration", header: "Duration", cell: (c) => duration(c.row.original.end - c.row.original.start) }),
      col.accessor("nodes", { header: "Nodes" }),
      col.accessor("cpus", { header: "CPUs" }),
      col.accessor("users", { header: "Users" }),
      col.accessor("accounts", { header: "Accounts" }),
      col.accessor("flags", { header: "Flags" }),
      col.display({
        id: "timeline",
        header: () => (
          <span>
            {when(axis.from, now)} → {when(axis.to, now)}
          </span>
        ),
        cell: (c) => {
          const r = c.row.original;
          return (
            <div className="timeline" title={`${when(r.start)} – ${when(r.end)}`}>
              <span
                className={"span" + (r.flags.includes("MAINT") ? " maint" : "")}
                style={{ left: pos(r.start), width: `calc(${pos(r.end)} - ${pos(r.start)})` }}
              />
              <span className="now" style={{ left: pos(now) }} />
            </div>
          );
        },
      }),
    ],
    [axis, now],
  );
  const table = useReactTable({ data: list, columns, getCoreRowModel: getCoreRowModel() });

  return (
    <section className="reservations">
      <p className="section-note">
        Reservations as <code>scontrol show reservation</code> lists them; the bar is each one&apos;s window, the red line
        now.
      </p>
      {resv.error && <p className="error">{resv.error.message}</p>}
      {resv.data && list.length === 0 && <p className="empty">No reservations.</p>}
      {list.length > 0 && (
        <GridTable table={table} className="grid-table small" testId="reservations" rowProps={(r) => ({ "data-resv": r.name })} />
      )}
    </section>
  );
}
