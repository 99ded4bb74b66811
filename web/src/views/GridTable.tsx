import { flexRender, type Table } from "@tanstack/react-table";
import type { ReactNode } from "react";
import { navigate } from "../router";

// A table of every row the model holds (no virtual scrolling: the Queue has its own), with
// per-row attributes the browser test finds rows by.
export function GridTable<T>({
  table,
  className,
  testId,
  rowProps,
}: {
  table: Table<T>;
  className: string;
  testId?: string;
  rowProps: (row: T) => Record<`data-${string}`, string | number>;
}) {
  return (
    <table className={className} data-testid={testId}>
      <thead>
        {table.getHeaderGroups().map((hg) => (
          <tr key={hg.id}>
            {hg.headers.map((h) => (
              <th key={h.id}>{flexRender(h.column.columnDef.header, h.getContext())}</th>
            ))}
          </tr>
        ))}
      </thead>
      <tbody>
        {table.getRowModel().rows.map((row) => (
          <tr key={row.id} {...rowProps(row.original)}>
            {row.getVisibleCells().map((c) => (
              <td key={c.id}>{flexRender(c.column.columnDef.cell, c.getContext())}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// A job's id linking to its page, followed inside the app.
export function JobLink({ jobId, label }: { jobId: number; label: string | number }) {
  return (
    <a
      href={`/ui/job/${jobId}`}
      onClick={(e) => {
        e.preventDefault();
        navigate(`/job/${jobId}`);
      }}
    >
      {label}
    </a>
  );
}

// Previous/next over a list the server pages; `children` follow the buttons (a page size).
export function Pager({
  offset,
  limit,
  total,
  onOffset,
  children,
}: {
  offset: number;
  limit: number;
  total: number;
  onOffset: (offset: number) => void;
  children?: ReactNode;
}) {
  return (
    <div className="pager">
      <button disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        ‹ Previous
      </button>
      <span>
        {total === 0 ? 0 : offset + 1}–{Math.min(total, offset + limit)} of {total.toLocaleString()}
      </span>
      <button disabled={offset + limit >= total} onClick={() => onOffset(offset + limit)}>
        Next ›
      </button>
      {children}
    </div>
  );
}
