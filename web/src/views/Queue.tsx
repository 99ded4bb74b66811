import { useEffect, useMemo, useRef, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  useReactTable,
  type SortingState,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { api, type JobQuery, type JobRow } from "../api";
import { navigate, useSearch } from "../router";
import { JobLink, Pager } from "./GridTable";
import { limit, stateClass, when } from "../format";

const STATES: [string, string][] = [
  ["PENDING,RUNNING", "Active"],
  ["PENDING", "Pending"],
  ["RUNNING", "Running"],
  ["COMPLETED,FAILED,CANCELLED,TIMEOUT,NODE_FAIL,OUT_OF_MEMORY,PREEMPTED", "Ended"],
  ["", "All"],
];
const PAGE_SIZES = [50, 100, 250, 500];
const col = createColumnHelper<JobRow>();

// The queue: filtered, sorted and paged by the controller (so 100,000 jobs cost one page), the
// page's rows virtualized.
export function Queue() {
  const search = useSearch();
  const q: JobQuery = {
    user: search.get("user") ?? "",
    account: search.get("account") ?? "",
    partition: search.get("partition") ?? "",
    name: search.get("name") ?? "",
    state: search.get("state") ?? "PENDING,RUNNING",
    sort: search.get("sort") ?? "id",
    order: (search.get("order") as "asc" | "desc") ?? "asc",
    offset: Number(search.get("offset") ?? 0),
    limit: Number(search.get("limit") ?? 100),
  };
  const set = (changes: Partial<Record<keyof JobQuery, string | number>>) => {
    const p = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === "" || v === undefined) p.delete(k);
      else p.set(k, String(v));
    }
    if (!("offset" in changes)) p.delete("offset");
    navigate(`/queue?${p}`, true);
  };

  const jobs = useQuery({
    queryKey: ["jobs", q],
    queryFn: () => api.jobs(q),
    placeholderData: keepPreviousData,
  });

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
      col.accessor("state", {
        header: "State",
        cell: (c) => <span className={stateClass(c.getValue())}>{c.getValue()}{c.row.original.completing ? "+CG" : ""}</span>,
      }),
      col.display({
        id: "why",
        header: "Why / expected start",
        cell: (c) => <Why row={c.row.original} now={jobs.data?.now} />,
      }),
      col.accessor("priority", { header: "Priority" }),
      col.accessor("cpus", { header: "CPUs" }),
      col.accessor("gpus", { header: "GPUs", cell: (c) => c.getValue() || "" }),
      col.accessor("submit_time", { header: "Submitted", cell: (c) => when(c.getValue(), jobs.data?.now) }),
      col.accessor("start_time", {
        header: "Start",
        cell: (c) => when(c.getValue() || c.row.original.expected_start, jobs.data?.now),
      }),
      col.accessor("time_limit_min", { id: "time_limit", header: "Limit", cell: (c) => limit(c.getValue()) }),
      col.accessor("nodes", { header: "Nodes", enableSorting: false }),
    ],
    [jobs.data?.now],
  );
  // Column ids as the controller names its sort keys.
  const sortKey: Record<string, string> = { submit_time: "submit_time", start_time: "start_time", id: "id" };
  const sorting: SortingState = [{ id: q.sort === "id" ? "id" : q.sort, desc: q.order === "desc" }];
  const table = useReactTable({
    data: jobs.data?.jobs ?? [],
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    manualPagination: true,
    manualFiltering: true,
    enableSortingRemoval: false,
    state: { sorting },
    onSortingChange: (up) => {
      const next = typeof up === "function" ? up(sorting) : up;
      const s = next[0];
      if (s) set({ sort: sortKey[s.id] ?? s.id, order: s.desc ? "desc" : "asc" });
    },
  });

  const scroller = useRef<HTMLDivElement>(null);
  const rows = table.getRowModel().rows;
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 30,
    overscan: 12,
  });
  const items = virt.getVirtualItems();
  const padTop = items.length ? items[0].start : 0;
  const padBottom = items.length ? virt.getTotalSize() - items[items.length - 1].end : 0;
  const total = jobs.data?.total ?? 0;

  return (
    <section className="queue">
      <div className="filters">
        <TextFilter label="User" value={q.user!} onChange={(v) => set({ user: v })} />
        <TextFilter label="Account" value={q.account!} onChange={(v) => set({ account: v })} />
        <TextFilter label="Partition" value={q.partition!} onChange={(v) => set({ partition: v })} />
        <TextFilter label="Name" value={q.name!} onChange={(v) => set({ name: v })} />
        <label>
          State
          <select name="state" value={q.state} onChange={(e) => set({ state: e.target.value === "" ? "ALL" : e.target.value })}>
            {STATES.map(([v, l]) => (
              <option key={l} value={v === "" ? "ALL" : v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <span className="count" data-testid="job-count">
          {total.toLocaleString()} job{total === 1 ? "" : "s"}
        </span>
      </div>
      {jobs.error && <p className="error">{jobs.error.message}</p>}
      <div className="table-scroll" ref={scroller}>
        <table className="grid-table">
          <thead>
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {hg.headers.map((h) => (
                  <th
                    key={h.id}
                    onClick={h.column.getCanSort() ? h.column.getToggleSortingHandler() : undefined}
                    className={h.column.getCanSort() ? "sortable" : ""}
                  >
                    {flexRender(h.column.columnDef.header, h.getContext())}
                    {{ asc: " ▲", desc: " ▼" }[h.column.getIsSorted() as string] ?? ""}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody>
            {padTop > 0 && <tr style={{ height: padTop }} />}
            {items.map((vi) => {
              const row = rows[vi.index];
              return (
                <tr
                  key={row.id}
                  ref={virt.measureElement}
                  data-index={vi.index}
                  data-job={row.original.job_id}
                  data-state={row.original.state}
                >
                  {row.getVisibleCells().map((c) => (
                    <td key={c.id}>{flexRender(c.column.columnDef.cell, c.getContext())}</td>
                  ))}
                </tr>
              );
            })}
            {padBottom > 0 && <tr style={{ height: padBottom }} />}
          </tbody>
        </table>
        {!jobs.isLoading && total === 0 && <p className="empty">No jobs match.</p>}
      </div>
      <Pager offset={q.offset} limit={q.limit} total={total} onOffset={(offset) => set({ offset })}>
        <select value={q.limit} onChange={(e) => set({ limit: e.target.value })}>
          {PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n} per page
            </option>
          ))}
        </select>
      </Pager>
    </section>
  );
}

function Why({ row, now }: { row: JobRow; now?: number }) {
  if (row.state !== "PENDING") return null;
  return (
    <span className="why" title={row.reason}>
      {row.reason_text}
      <code className="reason-code">{row.reason}</code>
      {row.expected_start > 0 && <span className="expected"> · expected start {when(row.expected_start, now)} from the current plan</span>}
    </span>
  );
}

// A filter box that tells the page once typing pauses.
export function TextFilter({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const t = setTimeout(() => onChange(text.trim()), 300);
    return () => clearTimeout(t);
  }, [text, value, onChange]);
  return (
    <label>
      {label}
      <input name={label.toLowerCase()} value={text} onChange={(e) => setText(e.target.value)} />
    </label>
  );
}
