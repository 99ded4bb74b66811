import { useEffect, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, followEvents, getToken, setToken } from "./api";
import { SECTIONS, navigate, usePath } from "./router";
import { Login } from "./views/Login";
import { Queue } from "./views/Queue";
import { JobView } from "./views/Job";
import { Nodes } from "./views/Nodes";
import { History } from "./views/History";
import { FairShare } from "./views/FairShare";
import { Usage } from "./views/Usage";
import { Reservations } from "./views/Reservations";
import { Kubernetes } from "./views/Kubernetes";

export function App() {
  const [token, setTok] = useState(getToken());
  const qc = useQueryClient();
  const who = useQuery({ queryKey: ["whoami", token], queryFn: api.whoami, enabled: !!token });
  const [live, setLive] = useState(false);

  // One event stream per page: each change invalidates what it touches, and the views
  // refetch only what they show.
  useEffect(() => {
    if (!token || !who.data) return;
    const ctl = new AbortController();
    // Leaving the page must end the stream too: Chromium otherwise keeps its connection until
    // the server closes it, and after a few page loads the browser's six connections per host
    // are all held by streams nobody reads.
    const leave = () => ctl.abort();
    window.addEventListener("pagehide", leave);
    void followEvents(
      (e) => {
        if (e.type === "jobs") {
          void qc.invalidateQueries({ queryKey: ["jobs"] });
          void qc.invalidateQueries({ queryKey: ["history"] });
          const ids = e.data.ids;
          void qc.invalidateQueries({
            queryKey: ["job"],
            predicate: (q) => !ids || ids.includes(q.queryKey[1] as number),
          });
        } else if (e.type === "nodes") {
          void qc.invalidateQueries({ queryKey: ["nodes"] });
          void qc.invalidateQueries({ queryKey: ["k8s"] });
        } else if (e.type === "k8s") {
          void qc.invalidateQueries({ queryKey: ["k8s"] });
        } else if (e.type === "hello") {
          void qc.invalidateQueries({ queryKey: ["jobs"] });
          void qc.invalidateQueries({ queryKey: ["nodes"] });
          void qc.invalidateQueries({ queryKey: ["k8s"] });
        }
      },
      setLive,
      ctl.signal,
    );
    return () => {
      window.removeEventListener("pagehide", leave);
      ctl.abort();
    };
  }, [token, who.data, qc]);

  const logout = () => {
    setToken(null);
    setTok(null);
    qc.clear();
  };

  if (!token || (who.error instanceof ApiError && who.error.status === 401)) {
    return (
      <Login
        error={who.error ? "That token was refused: " + who.error.message : undefined}
        onToken={(t) => {
          setToken(t);
          setTok(t);
        }}
      />
    );
  }
  if (!who.data) return <div className="loading">{who.error ? String(who.error.message) : "Connecting…"}</div>;
  return (
    <div className="app">
      <header className="top">
        <span className="brand">drover</span>
        <span className="cluster">{who.data.cluster}</span>
        <Nav operator={who.data.operator} k8s={who.data.k8s} />
        <span className={live ? "live on" : "live"} title={live ? "live updates" : "reconnecting"} data-testid="live">
          {live ? "● live" : "○ offline"}
        </span>
        <span className="user" data-testid="user">
          {who.data.user}
          {who.data.operator ? " (operator)" : ""}
        </span>
        <button className="link" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        <Routes operator={who.data.operator} />
      </main>
    </div>
  );
}

function Nav({ operator, k8s }: { operator: boolean; k8s: boolean }) {
  const path = usePath();
  return (
    <nav>
      {SECTIONS.filter((s) => (!s.operatorOnly || operator) && (!s.k8sOnly || k8s)).map((s) => (
        <a
          key={s.id}
          href={"/ui" + s.path}
          className={s.match(path) ? "active" : ""}
          onClick={(e) => {
            e.preventDefault();
            navigate(s.path);
          }}
        >
          {s.label}
        </a>
      ))}
    </nav>
  );
}

function Routes({ operator }: { operator: boolean }) {
  const path = usePath();
  const job = /^\/job\/(\d+)$/.exec(path);
  if (job) return <JobView id={Number(job[1])} />;
  if (path.startsWith("/nodes")) return <Nodes operator={operator} />;
  if (path.startsWith("/history")) return <History />;
  if (path.startsWith("/fairshare")) return <FairShare />;
  if (path.startsWith("/usage")) return <Usage />;
  if (path.startsWith("/reservations")) return <Reservations />;
  if (path.startsWith("/kubernetes")) return <Kubernetes />;
  return <Queue />;
}
