import { useMemo } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { createColumnHelper, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { GridTable, JobLink, Pager } from "./GridTable";
import { api, type HistoryQuery, type HistoryRow } from "../api";
import { navigate, useSearch } from "../router";
import { duration, stateClass, when } from "../format";
import { TextFilter } from "./Queue";

const PERIODS: [number, string][] = [
  [86400, "Last 24 hours"],
  [7 * 86400, "Last 7 days"],
  [30 * 86400, "Last 30 days"],
  [90 * 86400, "Last 90 days"],
];
const STATES = ["", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"];
const col = createColumnHelper<HistoryRow>();

// Ended jobs from the accounting store (sacct's view), newest first, paged by the controller.
export function History() {
  const search = useSearch();
  const period = Number(search.get("period") ?? 7 * 86400);
  // The period's end moves with the minute, so that the query key stays put between renders.
  const end = Math.floor(Date.now() / 60000) * 60 + 60;
  const q: HistoryQuery = {
    user: search.get("user") ?? "",
    account: search.get("account") ?? "",
    partition: search.get("partition") ?? "",
    name: search.get("name") ?? "",
    state: search.get("state") ?? "",
    start: end - period,
    end,
    offset: Number(search.get("offset") ?? 0),
    limit: Number(search.get("limit") ?? 100),
  };
  const set = (changes: Record<string, string | number>) => {
    const p = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === "" || v === undefined) p.delete(k);
      else p.set(k, String(v));
    }
    if (!("offset" in changes)) p.delete("offset");
    navigate(`/history?${p}`, true);
  };
  const jobs = useQuery({ queryKey: ["history", q], queryFn: () => api.history(q), placeholderData: keepPreviousData });

  const columns = useMemo(
    () => [
      col.accessor("id", {
        header: "Job",
        cell: (c) => <JobLink jobId={c.row.original.job_id} label={c.getValue()} />,
      }),
      col.accessor("name", { header: "Name" }),
      col.accessor("user", { header: "User" }),
      col.accessor("account", { header: "Account" }),
      col.accessor("partition", { header: "Partition" }),
      col.accessor("state", { header: "State", cell: (c) => <span className={stateClass(c.getValue())}>{c.getValue()}</span> }),
      col.accessor("exit_code", { header: "Exit", cell: (c) => `${c.getValue()}:${c.row.original.signal}` }),
      col.accessor("cpus", { header: "CPUs" }),
      col.accessor("gpus", { header: "GPUs", cell: (c) => c.getValue() || "" }),
      col.accessor("start_time", { header: "Started", cell: (c) => when(c.getValue()) }),
      col.accessor("end_time", { header: "Ended", cell: (c) => when(c.getValue()) }),
      col.accessor("elapsed", { header: "Elapsed", cell: (c) => duration(c.getValue()) }),
      col.accessor("nodes", { header: "Nodes" }),
    ],
    [],
  );
  const table = useReactTable({ data: jobs.data?.jobs ?? [], columns, getCoreRowModel: getCoreRowModel(), manualPagination: true });
  const total = jobs.data?.total ?? 0;

  return (
    <section className="history">
      <div className="filters">
        <label>
          Period
          <select name="period" value={period} onChange={(e) => set({ period: e.target.value })}>
            {PERIODS.map(([s, l]) => (
              <option key={s} value={s}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <TextFilter label="User" value={q.user!} onChange={(v) => set({ user: v })} />
        <TextFilter label="Account" value={q.account!} onChange={(v) => set({ account: v })} />
        <TextFilter label="Partition" value={q.partition!} onChange={(v) => set({ partition: v })} />
        <TextFilter label="Name" value={q.name!} onChange={(v) => set({ name: v })} />
        <label>
          State
          <select name="state" value={q.state} onChange={(e) => set({ state: e.target.value })}>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s || "Any ended"}
              </option>
            ))}
          </select>
        </label>
        <span className="count" data-testid="history-count">
          {total.toLocaleString()} ended job{total === 1 ? "" : "s"}
        </span>
      </div>
      <p className="section-note">From the accounting store, as sacct reads it: jobs that ended in the period.</p>
      {jobs.error && <p className="error">{jobs.error.message}</p>}
      <div className="table-scroll">
        <GridTable table={table} className="grid-table" rowProps={(r) => ({ "data-job": r.job_id, "data-state": r.state })} />
        {!jobs.isLoading && total === 0 && <p className="empty">No ended jobs in this period.</p>}
      </div>
      <Pager offset={q.offset} limit={q.limit} total={total} onOffset={(offset) => set({ offset })} />
    </section>
  );
}
