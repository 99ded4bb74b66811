// The dashboard driven in headless Chromium (puppeteer-core, Debian's chromium): run by
// test_browser.py with DROVER_UI (the /ui/ URL), CHROMIUM, WORKDIR and three tokens. Prints what
// it checked; exits non-zero at the first failure. SCREENSHOTS=DIR saves each view there.
import puppeteer from "puppeteer-core";
import path from "node:path";

const UI = process.env.DROVER_UI;
const ORIGIN = new URL(UI).origin;
const shots = process.env.SCREENSHOTS;
const T = 30000;

function log(...a) {
  console.log(...a);
}

async function rest(token, method, p, body) {
  const res = await fetch(ORIGIN + p, {
    method,
    headers: { "X-SLURM-USER-TOKEN": token, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : null };
}

async function submit(token, name, script, extra = {}) {
  const r = await rest(token, "POST", "/slurm/v0.0.44/job/submit", {
    script,
    job: {
      name,
      current_working_directory: process.env.WORKDIR,
      standard_output: path.join(process.env.WORKDIR, `${name}-%j.out`),
      environment: ["PATH=/bin:/usr/bin", "WEB_SECRET_ENV=env-secret-7f3a"],
      ...extra,
    },
  });
  if (r.status !== 200) throw new Error(`submit ${name}: ${r.status} ${r.text}`);
  return r.json.job_id;
}

// `answer(pathname)` may give canned JSON for a dashboard request (a state this cluster cannot
// make, such as the Kubernetes operator's); everything else goes to the controller.
async function login(browser, token, answer) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  if (answer) {
    await page.setRequestInterception(true);
    page.on("request", (req) => {
      const canned = answer(new URL(req.url()).pathname);
      if (canned === undefined) return req.continue();
      return req.respond({ status: 200, contentType: "application/json", body: JSON.stringify(canned) });
    });
  }
  await page.setViewport({ width: 1400, height: 860 });
  page.on("pageerror", (e) => log("page error:", e.message));
  page.on("dialog", async (d) => {
    if (d.type() === "prompt") await d.accept("web test drain");
    else await d.accept();
  });
  await page.goto(UI, { waitUntil: "load" });
  await page.waitForSelector("textarea[name=token]", { timeout: T });
  if (shots) await page.screenshot({ path: path.join(shots, "ui-login.png") });
  await page.type("textarea[name=token]", token);
  await page.click("button[type=submit]");
  await page.waitForSelector("[data-testid=user]", { timeout: T });
  await page.waitForFunction(() => document.querySelector("[data-testid=live]")?.textContent?.includes("live"), {
    timeout: T,
  });
  return page;
}

async function text(page) {
  return page.evaluate(() => document.body.innerText);
}

function check(ok, what) {
  if (!ok) throw new Error("FAILED: " + what);
  log("ok:", what);
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  // Alice logs in with her token and watches the queue.
  const alice = await login(browser, process.env.TOKEN_ALICE);
  check((await text(alice)).includes("drwebalice"), "alice is logged in");
  await alice.evaluate(() => {
    window.__noReload = true;
  });

  // A job submitted now appears in the open page by itself, then starts and ends.
  const live = await submit(
    process.env.TOKEN_ALICE,
    "web-live",
    "#!/bin/sh\n# script-secret-91c2\necho output-line-5d1e\necho error-line-2b7c >&2\nsleep 4\n",
  );
  await alice.waitForSelector(`tr[data-job="${live}"]`, { timeout: T });
  check(await alice.evaluate(() => window.__noReload === true), `job ${live} appeared live, without a reload`);
  await alice.waitForSelector(`tr[data-job="${live}"][data-state="RUNNING"]`, { timeout: T });
  check(true, `job ${live} seen running in the queue`);
  await alice.click(`tr[data-job="${live}"] a`);
  await alice.waitForSelector("[data-testid=job-detail]", { timeout: T });
  await alice.waitForSelector('[data-testid=job-detail][data-state="COMPLETED"]', { timeout: T });
  check(await alice.evaluate(() => window.__noReload === true), `job ${live} seen ending on its page`);
  const own = await text(alice);
  check(!own.includes("script-secret-91c2") && !own.includes("env-secret-7f3a"), "no script or environment on the job page");

  // Its output, tailed on its page for its owner; the accounting record once it has ended.
  await alice.waitForFunction(
    () => document.querySelector("[data-testid=output-text]")?.textContent?.includes("output-line-5d1e"),
    { timeout: T },
  );
  check(true, `job ${live}'s stdout tail shown to its owner`);
  await alice.click("[data-testid=job-output] .tabs button:nth-child(2)");
  await alice.waitForFunction(
    () => document.querySelector("[data-testid=output-text]")?.textContent?.includes("error-line-2b7c"),
    { timeout: T },
  );
  check(true, `job ${live}'s stderr tail shown`);
  await alice.waitForSelector("[data-testid=job-accounting]", { timeout: T });
  const acct = await alice.$eval("[data-testid=job-accounting]", (e) => e.textContent);
  check(acct.includes("COMPLETED") && acct.includes("0:0") && acct.includes("batch"), `accounting record on the job page`);

  // The history view (from the accounting store) lists it.
  await alice.goto(`${UI}history`, { waitUntil: "load" });
  await alice.waitForSelector(`tr[data-job="${live}"][data-state="COMPLETED"]`, { timeout: T });
  check(true, `job ${live} in the history of ended jobs`);

  // A pending job shows why it waits, in words, beside Slurm's code.
  const later = await submit(process.env.TOKEN_ALICE, "web-later", "#!/bin/sh\nsleep 300\n", {
    begin_time: { set: true, number: Math.floor(Date.now() / 1000) + 3600 },
  });
  await alice.goto(`${UI}queue`, { waitUntil: "load" });
  await alice.waitForSelector(`tr[data-job="${later}"] .why`, { timeout: T });
  const why = await alice.$eval(`tr[data-job="${later}"] .why`, (e) => e.textContent);
  check(why.includes("begin time") && why.includes("BeginTime"), `pending reason in words: "${why}"`);

  // Hold and release a pending job, from its page.
  await alice.goto(`${UI}job/${later}`, { waitUntil: "load" });
  await alice.waitForSelector("[data-testid=hold]", { timeout: T });
  await alice.click("[data-testid=hold]");
  await alice.waitForFunction(() => document.body.innerText.includes("JobHeldUser"), { timeout: T });
  check(true, `job ${later} held (JobHeldUser shown)`);
  await alice.waitForSelector("[data-testid=release]", { timeout: T });
  await alice.click("[data-testid=release]");
  await alice.waitForFunction(() => !document.body.innerText.includes("JobHeldUser"), { timeout: T });
  check(true, `job ${later} released`);

  // Cancel a running job from its page (through the REST API's DELETE).
  const victim = await submit(process.env.TOKEN_ALICE, "web-cancel", "#!/bin/sh\nsleep 300\n");
  await alice.goto(`${UI}job/${victim}`, { waitUntil: "load" });
  await alice.waitForSelector('[data-testid=job-detail][data-state="RUNNING"]', { timeout: T });
  await alice.click("[data-testid=cancel]");
  await alice.waitForSelector('[data-testid=job-detail][data-state="CANCELLED"]', { timeout: T });
  check(true, `job ${victim} cancelled from the page`);

  // Output the controller cannot see (as on a node's own disk: here the job removes its file)
  // is explained, with the node, not shown as missing.
  const local = await submit(
    process.env.TOKEN_ALICE,
    "web-local",
    `#!/bin/sh\nrm -f ${process.env.WORKDIR}/web-local-$SLURM_JOB_ID.out\nsleep 300\n`,
  );
  let whyNot = "";
  for (let i = 0; i < 100 && !whyNot.includes("own disk"); i++) {
    await new Promise((r) => setTimeout(r, 300));
    whyNot = (await rest(process.env.TOKEN_ALICE, "GET", `/ui/api/job/${local}/output`)).json?.error ?? "";
  }
  check(whyNot.includes("own disk") && /node\d/.test(whyNot), `output on a node's disk explained: "${whyNot}"`);
  await rest(process.env.TOKEN_ALICE, "DELETE", `/slurm/v0.0.44/job/${local}`);

  // Bob sees alice's job but not its script or environment, and has no actions on it.
  const bob = await login(browser, process.env.TOKEN_BOB);
  await bob.goto(`${UI}job/${live}`, { waitUntil: "load" });
  await bob.waitForSelector("[data-testid=job-detail], [data-testid=job-error]", { timeout: T });
  const seen = await text(bob);
  const raw = await bob.evaluate(
    async (id, tok) => (await fetch(`/ui/api/job/${id}`, { headers: { "X-SLURM-USER-TOKEN": tok } })).text(),
    live,
    process.env.TOKEN_BOB,
  );
  check(
    !seen.includes("script-secret-91c2") && !raw.includes("script-secret-91c2") && !raw.includes("env-secret-7f3a"),
    "bob does not see alice's script or environment",
  );
  await bob.goto(`${UI}job/${later}`, { waitUntil: "load" });
  await bob.waitForSelector("[data-testid=job-detail]", { timeout: T });
  check((await bob.$("[data-testid=cancel]")) === null, "bob has no cancel button on alice's job");
  const notYours = await rest(process.env.TOKEN_BOB, "GET", `/ui/api/job/${live}/output`);
  check(notYours.status === 404 && !notYours.text.includes("output-line-5d1e"), `bob may not read alice's output (${notYours.status})`);
  await bob.goto(`${UI}job/${live}`, { waitUntil: "load" });
  await bob.waitForSelector("[data-testid=job-detail]", { timeout: T });
  await new Promise((r) => setTimeout(r, 500));
  check((await bob.$("[data-testid=output-text]")) === null, "no output panel for bob on alice's job");
  const denied = await rest(process.env.TOKEN_BOB, "POST", `/ui/api/job/${later}/hold`);
  check(denied.status === 403, `bob may not hold alice's job (${denied.status} ${denied.text})`);
  await bob.goto(`${UI}nodes`, { waitUntil: "load" });
  await bob.waitForSelector('.tile[data-node="node1"]', { timeout: T });
  await bob.click('.tile[data-node="node1"]');
  await bob.waitForSelector("[data-testid=node-detail]", { timeout: T });
  check((await bob.$("[data-testid=drain]")) === null, "a user has no drain button");
  const refused = await rest(process.env.TOKEN_BOB, "POST", "/ui/api/node/node1/drain", { reason: "x" });
  check(refused.status === 403, `a user may not drain (${refused.status})`);

  // The operator drains a node and resumes it.
  const root = await login(browser, process.env.TOKEN_ROOT);
  await root.goto(`${UI}nodes`, { waitUntil: "load" });
  await root.waitForSelector('.tile[data-node="node1"]', { timeout: T });
  await root.click('.tile[data-node="node1"]');
  await root.waitForSelector("[data-testid=drain]", { timeout: T });
  await root.click("[data-testid=drain]");
  await root.waitForFunction(
    () => document.querySelector('.tile[data-node="node1"]')?.getAttribute("data-state")?.includes("DRAIN"),
    { timeout: T },
  );
  const nodes = (await rest(process.env.TOKEN_ROOT, "GET", "/ui/api/nodes")).json.nodes;
  const n1 = nodes.find((n) => n.name === "node1");
  check(n1.state.includes("DRAIN") && n1.reason === "web test drain", `drained node1: ${n1.state} (${n1.reason})`);
  await root.click("[data-testid=resume]");
  await root.waitForFunction(
    () => !document.querySelector('.tile[data-node="node1"]')?.getAttribute("data-state")?.includes("DRAIN"),
    { timeout: T },
  );
  check(true, "resumed node1");

  // Fair share: the association tree with alice's user under root.
  await root.goto(`${UI}fairshare`, { waitUntil: "load" });
  await root.waitForSelector('[data-testid=fairshare] tr[data-user="drwebalice"]', { timeout: T });
  check(true, "fair-share tree shows drwebalice");

  // Usage: alice's seconds of CPU are in today's hours, and the CSV carries them.
  await root.goto(`${UI}usage?period=24h&by=user`, { waitUntil: "load" });
  await root.waitForSelector('[data-testid=usage-table] tr[data-key="drwebalice"]', { timeout: T });
  await root.waitForSelector("[data-testid=usage-chart] canvas", { timeout: T });
  const csv = await root.evaluate(async () => {
    let blob = null;
    URL.createObjectURL = (b) => {
      blob = b;
      return "blob:captured";
    };
    HTMLAnchorElement.prototype.click = () => {};
    document.querySelector("[data-testid=usage-csv]").click();
    return blob ? await blob.text() : "";
  });
  check(csv.startsWith("period_start_utc,account,user,cpu_hours,gpu_hours\n") && csv.includes(",drwebalice,"), "usage chart and CSV");

  // Reservations: the one the test made, on the timeline.
  await root.goto(`${UI}reservations`, { waitUntil: "load" });
  await root.waitForSelector('[data-testid=reservations] tr[data-resv="webmaint"] .timeline .span', { timeout: T });
  check(true, "reservation webmaint on the timeline");
  // Long periods are refused by the controller with a message, not read whole.
  const long = await rest(process.env.TOKEN_ROOT, "GET", "/ui/api/history?start=0");
  check(long.status === 400 && long.json.error.includes("at most 93 days"), `a year of history is refused: ${long.text}`);

  // Kubernetes: this cluster runs no operator, so the view is hidden and the API says so.
  const k8sOff = await rest(process.env.TOKEN_ROOT, "GET", "/ui/api/k8s");
  check(k8sOff.status === 200 && k8sOff.json.enabled === false, `no operator: ${k8sOff.text}`);
  check(!(await text(root)).includes("Kubernetes"), "no Kubernetes view without the operator");
  // The view itself, with a canned operator state from the API's shape.
  const who = (await rest(process.env.TOKEN_ROOT, "GET", "/ui/api/whoami")).json;
  const t0 = Math.floor(Date.now() / 1000);
  const cond = (type, status, reason) => ({ type, status, reason, message: "", lastTransitionTime: "" });
  const pod = (name, nodeset, state, extra = {}) => ({
    name, nodeset, phase: "Running", ready: true, k8s_node: "kind-worker", node: name, node_state: state,
    reason: "", jobs: 0, busy: false, protected: false, deleting: false, created: t0 - 3700, age_s: 3700, ...extra,
  });
  const canned = {
    enabled: true, namespace: "hpc", time: t0, version: 4, now: t0,
    nodesets: [
      {
        name: "gpu-a100", replicas: 3, status_replicas: 3, ready_replicas: 2, updated_replicas: 3,
        autoscaling: { min_replicas: 0, max_replicas: 8, idle_timeout_s: 600 }, cost: 4, update_strategy: "RollingUpdate",
        max_unavailable: "1", workload_protection: true, partitions: ["gpu"], deleting: false,
        node_states: { allocated: 2, unregistered: 1 },
        conditions: [cond("Available", "True", "MinimumNodesAvailable"), cond("Progressing", "True", "ScalingUp"), cond("Degraded", "False", "AsExpected")],
        error: "",
      },
      {
        name: "cpu", replicas: 2, status_replicas: 2, ready_replicas: 2, updated_replicas: 2, autoscaling: null, cost: 1,
        update_strategy: "OnDelete", max_unavailable: "1", workload_protection: true, partitions: ["batch"], deleting: false,
        node_states: { idle: 1, drained: 1 },
        conditions: [cond("Available", "True", "MinimumNodesAvailable"), cond("Progressing", "False", "Complete"), cond("Degraded", "False", "AsExpected")],
        error: "",
      },
    ],
    pods: [
      pod("gpu-a100-0", "gpu-a100", "allocated", { jobs: 1, busy: true, protected: true }),
      pod("gpu-a100-1", "gpu-a100", "allocated", { jobs: 2, busy: true, protected: true }),
      pod("gpu-a100-2", "gpu-a100", "unregistered", { phase: "Pending", ready: false, k8s_node: "", age_s: 20, created: t0 - 20 }),
      pod("cpu-0", "cpu", "idle"),
      pod("cpu-1", "cpu", "drained", { reason: "kubectl cordon kind-worker2" }),
    ],
    decisions: [
      { time: t0 - 600, nodeset: "gpu-a100", from: 1, to: 2, reason: `2 nodes for job ${later} (-N2)`, jobs: [later] },
      { time: t0 - 30, nodeset: "gpu-a100", from: 2, to: 3, reason: "job 4242 needs 3 nodes", jobs: [4242] },
    ],
  };
  const k8s = await login(browser, process.env.TOKEN_ROOT, (p) =>
    p === "/ui/api/whoami" ? { ...who, k8s: true } : p === "/ui/api/k8s" ? canned : undefined,
  );
  await k8s.waitForSelector('nav a[href="/ui/kubernetes"]', { timeout: T });
  await k8s.click('nav a[href="/ui/kubernetes"]');
  await k8s.waitForSelector('[data-testid=nodesets] tr[data-nodeset="gpu-a100"]', { timeout: T });
  const row = await k8s.$eval('[data-testid=nodesets] tr[data-nodeset="gpu-a100"]', (e) => e.textContent);
  check(row.includes("2 / 3") && row.includes("0–8") && row.includes("2 allocated") && row.includes("ScalingUp"), `NodeSet row: ${row}`);
  const podRow = await k8s.$eval('[data-testid=pods] tr[data-pod="cpu-1"]', (e) => e.textContent);
  check(podRow.includes("drained") && podRow.includes("kubectl cordon"), `pod row: ${podRow}`);
  check((await k8s.$(`[data-testid=decisions] a[href="/ui/job/${later}"]`)) !== null, "a decision links its job");
  if (shots) await k8s.screenshot({ path: path.join(shots, "ui-kubernetes.png"), fullPage: true });
  await k8s.click('[data-testid=nodesets] tr[data-nodeset="cpu"] button');
  await k8s.waitForFunction(() => !document.querySelector('[data-testid=pods] tr[data-pod="gpu-a100-0"]'), { timeout: T });
  check(true, "pods of one NodeSet on a click");
  log(`jobs live=${live} cancel=${victim}`);

  if (shots) {
    // A fuller cluster for the pictures: a few users' jobs, some running, some waiting.
    for (let i = 0; i < 8; i++)
      await submit(process.env.TOKEN_ALICE, `train-resnet-${i}`, "#!/bin/sh\nsleep 600\n", { tasks: 1 + (i % 2) });
    for (let i = 0; i < 4; i++)
      await submit(process.env.TOKEN_BOB, `eval-sweep-${i}`, "#!/bin/sh\nsleep 600\n", { tasks: 2 });
    await root.goto(`${UI}queue`, { waitUntil: "load" });
    await root.waitForSelector('tr[data-state="PENDING"]', { timeout: T });
    await new Promise((r) => setTimeout(r, 1500));
    await root.screenshot({ path: path.join(shots, "ui-queue.png") });
    const running = await root.$eval('tr[data-state="RUNNING"]', (e) => e.getAttribute("data-job"));
    await root.goto(`${UI}job/${running}`, { waitUntil: "load" });
    await root.waitForSelector("[data-testid=job-detail]", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-job.png") });
    await root.goto(`${UI}nodes`, { waitUntil: "load" });
    await root.waitForSelector('.tile[data-node="node2"]', { timeout: T });
    await root.click('.tile[data-node="node2"]');
    await root.waitForSelector("[data-testid=node-detail]", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-nodes.png") });
    await root.goto(`${UI}history`, { waitUntil: "load" });
    await root.waitForSelector("tr[data-job]", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-history.png") });
    await root.goto(`${UI}fairshare`, { waitUntil: "load" });
    await root.waitForSelector("[data-testid=fairshare]", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-fairshare.png") });
    await root.goto(`${UI}usage?period=24h&by=user`, { waitUntil: "load" });
    await root.waitForSelector("[data-testid=usage-chart] canvas", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-usage.png") });
    await root.goto(`${UI}reservations`, { waitUntil: "load" });
    await root.waitForSelector("[data-testid=reservations]", { timeout: T });
    await root.screenshot({ path: path.join(shots, "ui-reservations.png") });
    log("screenshots in", shots);
  }
} catch (e) {
  console.error(e.stack ?? String(e));
  process.exitCode = 1;
} finally {
  await browser.close();
}
