import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, type AcctRecord, type JobDetail } from "../api";
import { navigate } from "../router";
import { duration, limit, mem, stateClass, when } from "../format";

export function JobView({ id }: { id: number }) {
  const qc = useQueryClient();
  const job = useQuery({ queryKey: ["job", id], queryFn: () => api.job(id) });
  const [message, setMessage] = useState<string | null>(null);
  const act = useMutation({
    mutationFn: async (what: "cancel" | "hold" | "release") => {
      if (what === "cancel") await api.cancel(id);
      else if (what === "hold") await api.hold(id);
      else await api.release(id);
      return what;
    },
    onSuccess: (what) => {
      setMessage(`${what} sent`);
      void qc.invalidateQueries({ queryKey: ["job", id] });
      void qc.invalidateQueries({ queryKey: ["jobs"] });
    },
    onError: (e) => setMessage(e.message),
  });

  // A job the controller no longer holds: its accounting record, when there is one.
  if (job.error instanceof ApiError && job.error.status === 404) return <EndedJob id={id} />;
  if (job.error)
    return (
      <section className="job">
        <p className="error" data-testid="job-error">
          Job {id}: {job.error.message}
        </p>
        <BackLink />
      </section>
    );
  if (!job.data) return <p className="loading">Loading job {id}…</p>;
  const j = job.data;
  const pending = j.state === "PENDING";
  const active = pending || j.state === "RUNNING" || j.state === "SUSPENDED";
  return (
    <section className="job" data-testid="job-detail" data-state={j.state}>
      <BackLink />
      <h2>
        Job {j.display_id} <span className="name">{String(j.spec.name ?? "")}</span>{" "}
        <span className={stateClass(j.state)} data-testid="job-state">
          {j.state}
        </span>
      </h2>
      {pending && (
        <p className="why big">
          {j.reason_text} <code className="reason-code">{j.reason}</code>
          {j.expected_start > 0 && <> · expected start {when(j.expected_start)} from the current plan</>}
        </p>
      )}
      {j.may_act && active && (
        <div className="actions">
          <button
            className="danger"
            data-testid="cancel"
            disabled={act.isPending}
            onClick={() => window.confirm(`Cancel job ${j.display_id}?`) && act.mutate("cancel")}
          >
            Cancel
          </button>
          {pending && !j.held && (
            <button data-testid="hold" disabled={act.isPending} onClick={() => act.mutate("hold")}>
              Hold
            </button>
          )}
          {pending && j.held > 0 && (j.held === 1 || j.may_release_admin_hold) && (
            <button data-testid="release" disabled={act.isPending} onClick={() => act.mutate("release")}>
              Release
            </button>
          )}
          {message && <span className="message">{message}</span>}
        </div>
      )}
      <div className="cards">
        <Card title="Owner">
          <Field k="User" v={j.user} />
          <Field k="Group" v={j.group} />
          <Field k="Account" v={String(j.spec.account ?? "")} />
          <Field k="QOS" v={String(j.spec.qos ?? "")} />
        </Card>
        <Card title="Times">
          <Field k="Submitted" v={when(j.submit_time)} />
          <Field k="Started" v={when(j.start_time)} />
          <Field k="Ended" v={when(j.end_time)} />
          <Field k="Run time" v={duration(j.run_time)} />
          <Field k="Time limit" v={limit(j.time_limit_min)} />
        </Card>
        <Card title="Request">
          <Field k="Partition" v={j.partition} />
          <Field k="Tasks" v={String(j.spec.ntasks ?? "")} />
          <Field k="CPUs per task" v={String(j.spec.cpus_per_task ?? "")} />
          <Field k="CPUs" v={String(j.cpus)} />
          <Field k="GPUs" v={j.gpus ? String(j.gpus) : ""} />
          <Field k="Priority" v={String(j.priority)} />
          <Field k="Work dir" v={String(j.spec.workdir ?? "")} />
          <Field k="Output" v={j.std_out_path ?? ""} />
        </Card>
        <Allocation j={j} />
      </div>
      <Output id={j.id} running={active} />
      {!active && <Accounting id={j.id} endedAt={j.end_time} />}
      <h3>Steps</h3>
      {j.steps.length === 0 ? (
        <p className="empty">No running steps.</p>
      ) : (
        <table className="grid-table small">
          <thead>
            <tr>
              <th>Step</th>
              <th>Name</th>
              <th>State</th>
              <th>Nodes</th>
              <th>Tasks</th>
              <th>CPUs</th>
              <th>GPUs</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {j.steps.map((s) => (
              <tr key={s.id}>
                <td>
                  {j.id}.{s.id}
                </td>
                <td>{s.name}</td>
                <td>{s.state}</td>
                <td>{s.nodelist}</td>
                <td>{s.ntasks}</td>
                <td>{s.cpus}</td>
                <td>{s.gpus || ""}</td>
                <td>{when(s.start_time)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const ENDED_WAIT_S = 120;

// sacct's view of an ended job: the record the accounting store keeps, with its steps.
function Accounting({ id, endedAt }: { id: number; endedAt?: number }) {
  const rec = useQuery({
    queryKey: ["acct", id],
    queryFn: () => api.accounting(id),
    // The record is written just after the job ends: ask again for a little while.
    retry: (n, e) => e instanceof ApiError && e.status === 404 && n < 6 && (!endedAt || Date.now() / 1000 - endedAt < ENDED_WAIT_S),
    retryDelay: 1500,
  });
  if (rec.error)
    return (
      <p className="empty" data-testid="acct-missing">
        Accounting: {rec.error.message}
      </p>
    );
  if (!rec.data) return <p className="loading">Loading the accounting record…</p>;
  return <AccountingRecord r={rec.data} />;
}

function exitText(code: number, signal: number): string {
  return `${code}:${signal}`;
}

function AccountingRecord({ r }: { r: AcctRecord }) {
  return (
    <div data-testid="job-accounting">
      <h3>Accounting</h3>
      <div className="cards">
        <Card title="Record">
          <Field k="State" v={r.state} />
          <Field k="Exit code" v={exitText(r.exit_code, r.exit_signal)} />
          <Field k="Elapsed" v={duration(r.elapsed)} />
          <Field k="Restarts" v={r.restarts ? String(r.restarts) : ""} />
          <Field k="Reason" v={r.reason === "None" ? "" : r.reason} />
        </Card>
        <Card title="Resources">
          <Field k="Requested" v={r.req_tres} />
          <Field k="Allocated" v={r.alloc_tres} />
          <Field k="Nodes" v={r.nodelist} />
          <Field k="CPU time" v={duration(r.elapsed * r.alloc_cpus)} />
          <Field k="GPU time" v={r.gpus ? duration(r.elapsed * r.gpus) : ""} />
        </Card>
      </div>
      {r.steps.length > 0 && (
        <table className="grid-table small" data-testid="acct-steps">
          <thead>
            <tr>
              <th>Step</th>
              <th>Name</th>
              <th>State</th>
              <th>Exit</th>
              <th>Elapsed</th>
              <th>Nodes</th>
              <th>Tasks</th>
              <th>CPUs</th>
              <th>MaxRSS</th>
            </tr>
          </thead>
          <tbody>
            {r.steps.map((s) => (
              <tr key={s.name}>
                <td>
                  {r.job_id}.{s.name}
                </td>
                <td>{s.job_name}</td>
                <td>{s.state}</td>
                <td>{exitText(s.exit_code, s.exit_signal)}</td>
                <td>{s.end_time && s.start_time ? duration(s.end_time - s.start_time) : ""}</td>
                <td>{s.nodelist}</td>
                <td>{s.ntasks}</td>
                <td>{s.ncpus}</td>
                <td>{s.max_rss_kb >= 0 ? mem(Math.round(s.max_rss_kb / 1024)) : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

// A job the controller has forgotten (MinJobAge passed): only the accounting store knows it.
function EndedJob({ id }: { id: number }) {
  const rec = useQuery({ queryKey: ["acct", id], queryFn: () => api.accounting(id), retry: false });
  if (rec.error)
    return (
      <section className="job">
        <p className="error" data-testid="job-error">
          Job {id}: {rec.error.message}
        </p>
        <BackLink />
      </section>
    );
  if (!rec.data) return <p className="loading">Loading job {id}…</p>;
  const r = rec.data;
  return (
    <section className="job" data-testid="job-detail" data-state={r.state} data-from="accounting">
      <BackLink />
      <h2>
        Job {r.job_id} <span className="name">{r.name}</span> <span className={stateClass(r.state)}>{r.state}</span>
      </h2>
      <div className="cards">
        <Card title="Owner">
          <Field k="User" v={r.user} />
          <Field k="Account" v={r.account} />
          <Field k="QOS" v={r.qos} />
          <Field k="Partition" v={r.partition} />
        </Card>
        <Card title="Times">
          <Field k="Submitted" v={when(r.submit_time)} />
          <Field k="Started" v={when(r.start_time)} />
          <Field k="Ended" v={when(r.end_time)} />
        </Card>
      </div>
      <AccountingRecord r={r} />
    </section>
  );
}

// The tail of the job's output file, refreshed while the job runs (its owner and operators).
function Output({ id, running }: { id: number; running: boolean }) {
  const [stream, setStream] = useState<"stdout" | "stderr">("stdout");
  const [open, setOpen] = useState(true);
  const out = useQuery({
    queryKey: ["output", id, stream],
    queryFn: () => api.output(id, stream),
    enabled: open,
    refetchInterval: running ? 2000 : false,
    retry: false,
  });
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    // Follow the end, as tail -f does, unless the reader scrolled up.
    const el = pre.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 80) el.scrollTop = el.scrollHeight;
  }, [out.data?.text]);
  if (out.error instanceof ApiError && out.error.status === 404) return null;  // not ours to read
  return (
    <div className="output" data-testid="job-output">
      <h3>
        Output{" "}
        <span className="tabs">
          {(["stdout", "stderr"] as const).map((s) => (
            <button key={s} className={s === stream ? "active" : ""} onClick={() => setStream(s)}>
              {s}
            </button>
          ))}
          <button className="link" onClick={() => setOpen(!open)}>
            {open ? "hide" : "show"}
          </button>
        </span>
      </h3>
      {open && out.data && (
        <>
          <p className="muted small">
            <code>{out.data.path}</code>
            {out.data.size !== undefined && <> · {out.data.size.toLocaleString()} bytes{out.data.truncated ? ", the last part shown" : ""}</>}
            {running && " · following"}
          </p>
          {out.data.error ? (
            <p className="empty">{out.data.error}</p>
          ) : (
            <pre ref={pre} className="tail" data-testid="output-text">
              {out.data.text || "(empty)"}
            </pre>
          )}
        </>
      )}
      {open && out.error && <p className="error">{out.error.message}</p>}
    </div>
  );
}

function Allocation({ j }: { j: JobDetail }) {
  return (
    <Card title="Allocation">
      {j.alloc && j.alloc.length > 0 ? (
        j.alloc.map((a) => (
          <Field
            key={a.node}
            k={a.node}
            v={`${a.cpus} CPU · ${mem(a.mem_mb)}${(a.gres ?? [])
              .filter((g) => g.name === "gpu")
              .map((g) => ` · ${g.count} GPU${g.type ? " " + g.type : ""}`)
              .join("")}`}
          />
        ))
      ) : (
        <Field k="Nodes" v={j.nodelist || "none yet"} />
      )}
    </Card>
  );
}

function Card({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <div className="card">
      <h4>{title}</h4>
      <dl>{children}</dl>
    </div>
  );
}

function Field({ k, v }: { k: string; v: string }) {
  return (
    <>
      <dt>{k}</dt>
      <dd>{v || "—"}</dd>
    </>
  );
}

function BackLink() {
  return (
    <a
      className="back"
      href="/ui/queue"
      onClick={(e) => {
        e.preventDefault();
        if (history.length > 1) history.back();
        else navigate("/queue");
      }}
    >
      ‹ Queue
    </a>
  );
}
