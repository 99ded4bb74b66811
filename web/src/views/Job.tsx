import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type JobDetail } from "../api";
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
