import { useEffect, useMemo, useRef, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { api, type UsageReply } from "../api";
import { navigate, useSearch } from "../router";

const PERIODS: { id: string; label: string; step: "hour" | "day"; buckets: number }[] = [
  { id: "24h", label: "Last 24 hours, by hour", step: "hour", buckets: 24 },
  { id: "7d", label: "Last 7 days, by day", step: "day", buckets: 7 },
  { id: "30d", label: "Last 30 days, by day", step: "day", buckets: 30 },
  { id: "90d", label: "Last 90 days, by day", step: "day", buckets: 90 },
];
const COLORS = ["#2f6fde", "#d9480f", "#2b8a3e", "#ae3ec9", "#e67700", "#0b7285", "#c2255c", "#5c940d", "#495057"];
const TOP = 8; // series drawn; the rest are summed as "others"

type By = "account" | "user";
type Metric = "cpu" | "gpu";

interface Line {
  key: string;
  hours: number[];
  total: number;
}

// Hours per account or per user, per period, from the accounting store's job records.
function lines(data: UsageReply, by: By, metric: Metric): Line[] {
  const sums = new Map<string, Line>();
  for (const s of data.series) {
    const key = by === "account" ? s.account : s.user;
    const secs = metric === "cpu" ? s.cpu_s : s.gpu_s;
    const l = sums.get(key) ?? { key, hours: new Array(data.buckets.length).fill(0), total: 0 };
    secs.forEach((v, i) => (l.hours[i] += v / 3600));
    l.total += (metric === "cpu" ? s.cpu_total_s : s.gpu_total_s) / 3600;
    sums.set(key, l);
  }
  const all = [...sums.values()].filter((l) => l.total > 0).sort((a, b) => b.total - a.total);
  if (all.length <= TOP + 1) return all;
  const rest: Line = { key: "others", hours: new Array(data.buckets.length).fill(0), total: 0 };
  for (const l of all.slice(TOP)) {
    l.hours.forEach((v, i) => (rest.hours[i] += v));
    rest.total += l.total;
  }
  return [...all.slice(0, TOP), rest];
}

function csv(data: UsageReply): string {
  const head = ["period_start_utc", "account", "user", "cpu_hours", "gpu_hours"];
  const out = [head.join(",")];
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  for (const s of data.series)
    data.buckets.forEach((t, i) => {
      if (!s.cpu_s[i] && !s.gpu_s[i]) return;
      out.push(
        [new Date(t * 1000).toISOString(), q(s.account), q(s.user), (s.cpu_s[i] / 3600).toFixed(3), (s.gpu_s[i] / 3600).toFixed(3)].join(","),
      );
    });
  return out.join("\n") + "\n";
}

export function Usage() {
  const search = useSearch();
  const period = PERIODS.find((p) => p.id === search.get("period")) ?? PERIODS[2];
  const by = (search.get("by") as By) ?? "account";
  const metric = (search.get("metric") as Metric) ?? "cpu";
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(search);
    p.set(k, v);
    navigate(`/usage?${p}`, true);
  };
  // Whole buckets, the one in progress last; the key changes only when a new bucket begins.
  const step = period.step === "hour" ? 3600 : 86400;
  const end = (Math.floor(Date.now() / 1000 / step) + 1) * step;
  const start = end - period.buckets * step;
  const usage = useQuery({
    queryKey: ["usage", start, end, period.step],
    queryFn: () => api.usage({ start, end, step: period.step }),
    placeholderData: keepPreviousData,
    refetchInterval: 60000,
  });
  const data = usage.data;
  const ls = useMemo(() => (data ? lines(data, by, metric) : []), [data, by, metric]);
  const total = ls.reduce((a, l) => a + l.total, 0);

  return (
    <section className="usage">
      <div className="filters">
        <label>
          Period
          <select name="period" value={period.id} onChange={(e) => set("period", e.target.value)}>
            {PERIODS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Per
          <select name="by" value={by} onChange={(e) => set("by", e.target.value)}>
            <option value="account">account</option>
            <option value="user">user</option>
          </select>
        </label>
        <label>
          Of
          <select name="metric" value={metric} onChange={(e) => set("metric", e.target.value)}>
            <option value="cpu">CPU hours</option>
            <option value="gpu">GPU hours</option>
          </select>
        </label>
        <span className="count" data-testid="usage-total">
          {total.toFixed(2)} {metric.toUpperCase()} hours
        </span>
        <button
          data-testid="usage-csv"
          disabled={!data}
          onClick={() => {
            if (!data) return;
            const url = URL.createObjectURL(new Blob([csv(data)], { type: "text/csv" }));
            const a = document.createElement("a");
            a.href = url;
            a.download = `usage-${new Date(data.start * 1000).toISOString().slice(0, 10)}-${period.id}.csv`;
            a.click();
            URL.revokeObjectURL(url);
          }}
        >
          Download CSV
        </button>
      </div>
      <p className="section-note">
        What jobs held while they ran (sreport&apos;s Allocated), from the accounting store, per {period.step}; the{" "}
        {period.step} in progress counts up to now. Times are in your browser&apos;s time zone; the CSV is in UTC.
      </p>
      {usage.error && <p className="error">{usage.error.message}</p>}
      {data && <Chart data={data} lines={ls} metric={metric} />}
      {data && (
        <table className="grid-table small" data-testid="usage-table">
          <thead>
            <tr>
              <th>{by === "account" ? "Account" : "User"}</th>
              <th>{metric.toUpperCase()} hours</th>
              <th>Share</th>
            </tr>
          </thead>
          <tbody>
            {ls.map((l) => (
              <tr key={l.key} data-key={l.key}>
                <td>{l.key}</td>
                <td>{l.total.toFixed(2)}</td>
                <td>{total > 0 ? ((100 * l.total) / total).toFixed(1) + "%" : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && ls.length === 0 && <p className="empty">No {metric.toUpperCase()} use in this period.</p>}
    </section>
  );
}

// uPlot: a small, fast canvas chart library (about 50 KB) with bars per series.
function Chart({ data, lines: ls, metric }: { data: UsageReply; lines: Line[]; metric: Metric }) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(900);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    const el = box.current;
    if (!el || ls.length === 0) return;
    const bars = uPlot.paths.bars!({ size: [0.8, 60], align: 1 });
    const plot = new uPlot(
      {
        width: Math.max(300, width - 16),
        height: 280,
        // The period whole: each bar stands from its bucket's start, the last one in view too.
        scales: { x: { time: true, range: [data.start, data.end] } },
        axes: [{}, { label: `${metric.toUpperCase()} hours`, size: 60 }],
        series: [
          {},
          ...ls.map((l, i) => ({
            label: l.key,
            stroke: COLORS[i % COLORS.length],
            fill: COLORS[i % COLORS.length] + "99",
            paths: ls.length === 1 ? bars : undefined,
            points: { show: ls.length > 1 },
            width: 2,
            value: (_: uPlot, v: number | null) => (v === null ? "" : v.toFixed(2)),
          })),
        ],
      },
      [data.buckets, ...ls.map((l) => l.hours)],
      el,
    );
    return () => plot.destroy();
  }, [data, ls, metric, width]);
  return <div className="chart" ref={box} data-testid="usage-chart" />;
}
