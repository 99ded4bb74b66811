export function when(t: number, now?: number): string {
  if (!t) return "";
  const d = new Date(t * 1000);
  const sameDay = now !== undefined && new Date(now * 1000).toDateString() === d.toDateString();
  return sameDay
    ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function duration(seconds: number): string {
  if (seconds < 0) return "";
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  const hms = [h, m, s].map((x) => String(x).padStart(2, "0")).join(":");
  return d > 0 ? `${d}-${hms}` : hms;
}

export function limit(min: number): string {
  if (min < 0) return "UNLIMITED";
  return duration(min * 60);
}

export function mem(mb: number): string {
  if (mb >= 1024 * 1024) return `${(mb / (1024 * 1024)).toFixed(1)} TiB`;
  if (mb >= 1024) return `${(mb / 1024).toFixed(1)} GiB`;
  return `${mb} MiB`;
}

export function stateClass(state: string): string {
  return "state state-" + state.toLowerCase().replace(/[^a-z]+.*$/, "");
}
