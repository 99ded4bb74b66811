// The REST API's place in the controller: requests are authenticated on the I/O thread (only
// the token key is needed, so unauthenticated floods never reach the state thread), then
// answered inside the state thread's batch with the token's user as the caller; an answer that
// changed something goes out only after its batch is committed, like the CLI's replies.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <ctime>
#include <memory>
#include <stdexcept>

#include "ctld/rest_api.hpp"
#include "ctld/rest_auth.hpp"
#include "ctld/server.hpp"
#include "ctld/ui_api.hpp"
#include "ctld/ui_k8s.hpp"
#include "ctld/ui_web.hpp"
#include "net/jwt.hpp"

namespace drover::ctld {

// Job records from the accounting store, on its own thread: the state thread only hands over
// what the answer needs of its state (the configuration, the scheduler's figures, the times).
void Server::answer_from_accounting(const RestRequest& req, const Caller& caller, int64_t now,
                                    std::function<void(const RestResponse&)> send) {
  class AccountingBackend : public RestBackend {
   public:
    AccountingBackend(store::AccountingStore& store, SchedStats stats)
        : store_(store), stats_(stats) {}
    json query(const proto::QueryRequest&) override {
      throw std::logic_error("query on the accounting thread");
    }
    json submit(const proto::SubmitRequest&, const Caller&) override {
      throw std::logic_error("submit on the accounting thread");
    }
    json cancel(const proto::CancelRequest&, const Caller&) override {
      throw std::logic_error("cancel on the accounting thread");
    }
    std::vector<store::JobRecord> acct_jobs(const store::JobFilter& filter) override {
      return store_.query(filter);
    }
    SchedStats sched_stats() override { return stats_; }

   private:
    store::AccountingStore& store_;
    SchedStats stats_;
  };
  auto config = std::make_shared<const Config>(machine_.config());
  acct_->post_query([req, caller, now, send = std::move(send), config, stats = sched_stats_,
                     started = started_at_, changed = last_job_change_,
                     planned = last_full_pass_at_](store::AccountingStore& store) {
    RestResponse r;
    try {
      AccountingBackend backend(store, stats);
      RestContext ctx{*config, backend, caller, now, started, changed, planned};
      r = rest_handle(req, ctx);
    } catch (const std::exception& e) {
      r = rest_failure(500, rest_errno::kError, e.what(), "controller", *config, caller, req.client,
                       true);
    }
    send(r);
  });
}

void Server::start_rest(net::HttpServer& http) {
  // The controller's own requests, run on the state thread within one batch.
  class Backend : public RestBackend {
   public:
    Backend(Server& s, Effects& fx, int64_t now) : s_(s), fx_(fx), now_(now) {}
    json query(const proto::QueryRequest& req) override { return s_.machine_.query(req, now_); }
    json submit(const proto::SubmitRequest& req, const Caller& who) override {
      json reply = s_.machine_.submit(req, who, now_, fx_);
      if (reply.value("ok", false)) ++s_.sched_stats_.jobs_submitted;
      return reply;
    }
    json cancel(const proto::CancelRequest& req, const Caller& who) override {
      return s_.machine_.cancel(req, who, now_, fx_);
    }
    // Never on this thread: requests that read job records go to answer_from_accounting.
    std::vector<store::JobRecord> acct_jobs(const store::JobFilter&) override {
      throw std::logic_error("job records are read on the accounting thread");
    }
    SchedStats sched_stats() override { return s_.sched_stats_; }

   private:
    Server& s_;
    Effects& fx_;
    int64_t now_;
  };

  auto handler = [this](const net::HttpRequest& http_req, net::HttpResponder respond) {
    const int64_t now = std::time(nullptr);
    RestRequest req{http_req.method, http_req.path, parse_query_string(http_req.query),
                    http_req.body, http_req.peer};
    auto send = [respond](const RestResponse& r) {
      net::HttpResponse h;
      h.status = r.status;
      h.content_type = "application/json";
      h.body = r.body.dump(2, ' ', false, json::error_handler_t::replace);
      respond(std::move(h));
    };
    const RestAuth auth =
        rest_authenticate(token_key(key_), http_req.header("X-SLURM-USER-NAME"),
                          http_req.header("X-SLURM-USER-TOKEN"), now, system_users());
    if (!auth.caller) {
      // Nothing reaches the state machine without a valid token.
      const bool db = req.path.rfind("/slurmdb/", 0) == 0;
      send(rest_failure(401, rest_errno::kRestAuthFail, "Authentication failed: " + auth.error,
                        "rest_auth/jwt", config_, Caller{}, req.client, db));
      return;
    }
    Event ev{Event::Rest, nullptr, {}, *auth.caller, {}};
    ev.apply = [this, req = std::move(req), send, now,
                caller = *auth.caller](Effects& fx) -> std::function<void()> {
      if (rest_reads_accounting(req)) {
        answer_from_accounting(req, caller, now, send);
        return nullptr;
      }
      RestResponse r;
      try {
        Backend backend(*this, fx, now);
        RestContext ctx{machine_.config(), backend,           caller, now, started_at_,
                        last_job_change_,  last_full_pass_at_};
        r = rest_handle(req, ctx);
      } catch (const std::exception& e) {
        r = rest_failure(500, rest_errno::kError, e.what(), "controller", machine_.config(), caller,
                         req.client, req.path.rfind("/slurmdb/", 0) == 0);
      }
      return [send, r = std::move(r)] { send(r); };
    };
    post(std::move(ev));
  };
  http.route_prefix("/slurm/", handler);
  http.route_prefix("/slurmdb/", handler);
  start_ui(http);
}

namespace {

net::HttpResponse ui_json(int status, const json& body) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

net::HttpResponse ui_error(int status, const std::string& text) {
  return ui_json(status, {{"error", text}});
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// "/ui/api/job/12/hold" -> {"job", "12", "hold"}
std::vector<std::string> ui_path_parts(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 8;  // after "/ui/api/"
  while (i <= path.size()) {
    const size_t slash = path.find('/', i);
    const size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > i) parts.push_back(path.substr(i, end - i));
    i = end + 1;
  }
  return parts;
}

// Reads a period's job records slice after slice, each slice posted to the accounting worker
// as work of its own (so other work runs between them), then answers from what `scan` made.
template <class Scan>
void scan_slices(AccountingWorker& acct, std::shared_ptr<Scan> scan,
                 std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>> slices, size_t i,
                 std::function<net::HttpResponse(const Scan&)> finish, net::HttpResponder respond) {
  if (i == slices->size()) return respond(finish(*scan));
  acct.post_query([&acct, scan, slices, i, finish, respond](store::AccountingStore& store) {
    try {
      const auto [from, to] = (*slices)[i];
      scan->add(store.query(scan->filter(from, to)), from, to);
    } catch (const std::exception& e) {
      return respond(ui_error(503, std::string("Problem talking to the database: ") + e.what()));
    }
    scan_slices(acct, scan, slices, i + 1, finish, respond);
  });
}

template <class Scan>
void scan_accounting(AccountingWorker& acct, std::shared_ptr<Scan> scan,
                     std::function<net::HttpResponse(const Scan&)> finish,
                     net::HttpResponder respond) {
  auto slices = std::make_shared<const std::vector<std::pair<int64_t, int64_t>>>(scan->slices());
  scan_slices(acct, std::move(scan), std::move(slices), 0, std::move(finish), std::move(respond));
}

}  // namespace

void Server::start_ui(net::HttpServer& http) {
  const std::string root = ui_find_web_root(config_.conf.get("DroverWebRoot", ""), self_exe());
  if (root.empty())
    spdlog::info("the web dashboard is not built: /ui/ answers how to build it");
  else
    spdlog::info("the web dashboard at /ui/ from {}", root);
  http.route("GET", "/ui", [](const net::HttpRequest&, net::HttpResponder respond) {
    net::HttpResponse r;
    r.status = 308;
    r.headers.emplace_back("Location", "/ui/");
    respond(std::move(r));
  });
  http.route_prefix("/ui/", [root](const net::HttpRequest& req, net::HttpResponder respond) {
    if (req.method != "GET" && req.method != "HEAD") {
      net::HttpResponse r = ui_error(405, "method not allowed");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return respond(std::move(r));
    }
    respond(ui_static_file(root, req.path));
  });

  // The change feed: each batch notes the jobs it touched; once a second while streams are
  // open the state thread looks at those (not the whole queue) and tells each stream what it
  // may see. With no stream for a minute the tracker lets go of its digests.
  auto hub = std::make_shared<UiEventHub>();
  auto tracker = std::make_shared<UiChangeTracker>();  // state thread only
  ui_after_batch_ = [tracker](const Effects& fx, const std::vector<uint64_t>& plan_changed) {
    tracker->note(fx, plan_changed);
  };
  auto timer = std::make_shared<boost::asio::steady_timer>(http.context());
  auto ticks = std::make_shared<uint64_t>(0);
  auto idle_ticks = std::make_shared<uint64_t>(0);
  auto k8s_seen = std::make_shared<uint64_t>(0);  // the I/O thread's
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [this, hub, tracker, timer, ticks, idle_ticks, k8s_seen, weak = std::weak_ptr(tick)] {
    timer->expires_after(std::chrono::seconds(1));
    timer->async_wait([this, hub, tracker, ticks, idle_ticks, k8s_seen,
                       weak](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      const bool open = hub->size() > 0;
      *idle_ticks = open ? 0 : *idle_ticks + 1;
      // The operator's view has a version of its own: no state-thread work to follow it.
      if (const K8sOperator* k = k8s_ui_.load(); k != nullptr) {
        const uint64_t version = k->observed_version();
        if (open && version != *k8s_seen) hub->publish_k8s(version);
        *k8s_seen = version;
      }
      if (open || *idle_ticks == 60) {
        if (open && ++*ticks % 15 == 0) hub->heartbeat();
        {
          std::lock_guard lock(mu_);
          tasks_.push_back([this, hub, tracker, open] {
            if (!open) {
              // A stream that opened meanwhile keeps the tracker.
              if (hub->size() == 0) tracker->reset();
              return;
            }
            const auto changes = tracker->look(machine_);
            if (!changes.jobs.empty() || changes.nodes)
              hub->publish(changes.jobs, last_job_change_, changes.nodes, changes.node_version);
          });
        }
        cv_.notify_one();
      }
      if (auto t = weak.lock()) (*t)();
    });
  };
  (*tick)();

  // The handler holds the ticker (its timer holds only a weak reference), so it runs as long
  // as the HTTP server does.
  auto reader = std::make_shared<UiFileReader>();
  auto handler = [this, hub, tracker, tick, reader](const net::HttpRequest& http_req,
                                                    net::HttpResponder respond) {
    const int64_t now = std::time(nullptr);
    const RestAuth auth =
        rest_authenticate(token_key(key_), http_req.header("X-SLURM-USER-NAME"),
                          http_req.header("X-SLURM-USER-TOKEN"), now, system_users());
    if (!auth.caller) return respond(ui_error(401, "Authentication failed: " + auth.error));
    const std::vector<std::string> parts = ui_path_parts(http_req.path);
    const std::string& method = http_req.method;
    const std::map<std::string, std::string> params = parse_query_string(http_req.query);
    const size_t n = parts.size();
    const std::string first = n > 0 ? parts[0] : "";
    // Each answer is made on the state thread, in a batch (a change goes out once committed).
    auto on_state = [this, caller = *auth.caller](
                        std::function<net::HttpResponse(Effects&, const UiViewer&)> answer,
                        net::HttpResponder respond) {
      Event ev{Event::Rest, nullptr, {}, caller, {}};
      ev.apply = [this, answer = std::move(answer), respond = std::move(respond),
                  caller](Effects& fx) -> std::function<void()> {
        net::HttpResponse r;
        try {
          r = answer(fx, ui_viewer(machine_, caller));
        } catch (const std::exception& e) {
          r = ui_error(500, e.what());
        }
        return [respond, r = std::move(r)]() mutable { respond(std::move(r)); };
      };
      post(std::move(ev));
    };
    // Answers that the state thread only starts: it checks who may see what, then hands the
    // reading to the accounting worker or the file reader, which respond themselves.
    auto on_state_then = [this, caller = *auth.caller](
                             std::function<void(const UiViewer&, net::HttpResponder)> start,
                             net::HttpResponder respond) {
      Event ev{Event::Rest, nullptr, {}, caller, {}};
      ev.apply = [this, start = std::move(start), respond = std::move(respond),
                  caller](Effects&) -> std::function<void()> {
        try {
          start(ui_viewer(machine_, caller), respond);
        } catch (const std::exception& e) {
          respond(ui_error(500, e.what()));
        }
        return nullptr;
      };
      post(std::move(ev));
    };
    // Job records, on the accounting worker (never the store on the state thread).
    auto from_accounting =
        [this](store::JobFilter filter,
               std::function<net::HttpResponse(std::vector<store::JobRecord>)> answer,
               net::HttpResponder respond) {
          acct_->post_query([filter = std::move(filter), answer = std::move(answer),
                             respond = std::move(respond)](store::AccountingStore& store) {
            net::HttpResponse r;
            try {
              r = answer(store.query(filter));
            } catch (const std::exception& e) {
              r = ui_error(503, std::string("Problem talking to the database: ") + e.what());
            }
            respond(std::move(r));
          });
        };
    auto job_id_of = [](const std::string& text) -> uint64_t {
      if (text.empty() || text.size() > 19 ||
          text.find_first_not_of("0123456789") != std::string::npos)
        return 0;
      return std::stoull(text);
    };

    if (method == "GET" && n == 1 && first == "whoami") {
      return on_state(
          [this](Effects&, const UiViewer& v) {
            return ui_json(200, {{"user", v.who.user},
                                 {"uid", v.who.uid},
                                 {"operator", v.is_operator},
                                 {"private_jobs", v.private_jobs},
                                 {"k8s", k8s_ui_.load() != nullptr},
                                 {"cluster", machine_.config().cluster_name}});
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "jobs") {
      UiJobQuery q;
      if (std::string err = ui_parse_job_query(params, q); !err.empty())
        return respond(ui_error(400, err));
      return on_state(
          [this, q, now](Effects&, const UiViewer& v) {
            return ui_json(200, ui_job_page(machine_, q, v, now, last_job_change_));
          },
          std::move(respond));
    }
    if (first == "job" && n >= 2) {
      const uint64_t id = job_id_of(parts[1]);
      if (id == 0) return respond(ui_error(400, "Invalid job id specified"));
      if (method == "GET" && n == 2)
        return on_state(
            [this, id, now](Effects&, const UiViewer& v) {
              auto j = ui_job_detail(machine_, id, v, now);
              return j ? ui_json(200, *j) : ui_error(404, "Invalid job id specified");
            },
            std::move(respond));
      if (method == "POST" && n == 3 && (parts[2] == "hold" || parts[2] == "release")) {
        // The commands' own request (scontrol hold/release): the same permission rules.
        const std::string action = parts[2];
        return on_state(
            [this, id, action, now](Effects& fx, const UiViewer& v) {
              const json reply = machine_.control(
                  proto::ControlRequest{.action = action, .jobs = {std::to_string(id)}}, v.who, now,
                  fx);
              if (reply.value("ok", false)) return ui_json(200, {{"ok", true}});
              proto::Error err(proto::Errno::kError, "Invalid request");
              for (const auto& e : reply.value("errors", json::array()))
                err = proto::Error::from_entry(e);
              if (reply.contains("error")) err = proto::Error::from_entry(reply);
              return ui_error(err.code == proto::Errno::kInvalidJobId ? 404 : 403, err.message);
            },
            std::move(respond));
      }
    }
    if (method == "GET" && n == 1 && first == "history") {
      UiHistoryQuery q;
      if (std::string err = ui_parse_history_query(params, q, now); !err.empty())
        return respond(ui_error(400, err));
      return on_state_then(
          [this, q](const UiViewer& v, net::HttpResponder respond) {
            scan_accounting<UiHistoryScan>(
                *acct_, std::make_shared<UiHistoryScan>(q, v),
                [](const UiHistoryScan& s) { return ui_json(200, s.page()); }, std::move(respond));
          },
          std::move(respond));
    }
    if (method == "GET" && first == "job" && n == 3 && parts[2] == "accounting") {
      const uint64_t id = job_id_of(parts[1]);
      if (id == 0) return respond(ui_error(400, "Invalid job id specified"));
      return on_state_then(
          [id, from_accounting](const UiViewer& v, net::HttpResponder respond) {
            store::JobFilter f;
            f.job_ids = {id};
            f.include_ineligible = true;
            from_accounting(
                f,
                [id, v](std::vector<store::JobRecord> records) {
                  auto j = ui_job_accounting(records, id, v);
                  return j ? ui_json(200, *j)
                           : ui_error(404, "No accounting record of job " + std::to_string(id) +
                                               " (yet)");
                },
                std::move(respond));
          },
          std::move(respond));
    }
    if (method == "GET" && first == "job" && n == 3 && parts[2] == "output") {
      const uint64_t id = job_id_of(parts[1]);
      if (id == 0) return respond(ui_error(400, "Invalid job id specified"));
      const std::string stream = params.contains("stream") ? params.at("stream") : "stdout";
      if (stream != "stdout" && stream != "stderr")
        return respond(ui_error(400, "stream is stdout or stderr"));
      int64_t bytes = static_cast<int64_t>(kUiTailDefault);
      if (params.contains("bytes")) {
        const std::string& b = params.at("bytes");
        if (b.empty() || b.size() > 9 || b.find_first_not_of("0123456789") != std::string::npos)
          return respond(ui_error(400, "bytes is not a number: " + b));
        bytes = std::stoll(b);
      }
      return on_state_then(
          [this, id, stream, bytes, reader](const UiViewer& v, net::HttpResponder respond) {
            const auto file = ui_output_file(machine_, id, stream == "stderr", v);
            if (!file)
              return respond(
                  ui_error(404, "No output of job " + std::to_string(id) + " for you to read"));
            const bool queued = reader->post([file = *file, bytes, respond]() mutable {
              json out = ui_read_tail(file.path, file.uid, static_cast<size_t>(bytes));
              if (out.value("missing", false)) out["error"] = ui_output_missing(file);
              respond(ui_json(200, out));
            });
            if (!queued) respond(ui_error(503, "too many output reads under way; try again"));
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "usage") {
      UiUsageQuery q;
      if (std::string err = ui_parse_usage_query(params, q, now); !err.empty())
        return respond(ui_error(400, err));
      return on_state_then(
          [this, q, now](const UiViewer& v, net::HttpResponder respond) {
            scan_accounting<UiUsageScan>(
                *acct_, std::make_shared<UiUsageScan>(q, v, now),
                [](const UiUsageScan& s) { return ui_json(200, s.result()); }, std::move(respond));
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "fairshare") {
      return on_state(
          [this, now](Effects&, const UiViewer& v) {
            return ui_json(200, ui_fairshare(machine_, v, now));
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "reservations") {
      return on_state(
          [this, now](Effects&, const UiViewer& v) {
            return ui_json(200, ui_reservations(machine_, v, now));
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "k8s") {
      // The operator's copy is taken off the state thread; the state thread only decides
      // which jobs a decision may name to this viewer.
      const K8sOperator* k = k8s_ui_.load();
      std::optional<k8s::op::ObservedView> view;
      std::vector<k8s::op::ScaleDecision> decisions;
      if (k != nullptr) {
        view = k->observed();
        decisions = k->decisions().recent(kUiK8sDecisions);
      }
      return on_state(
          [this, view = std::move(view), decisions = std::move(decisions), now](Effects&,
                                                                                const UiViewer& v) {
            return ui_json(200, ui_k8s(view, decisions, machine_, v, now));
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "nodes") {
      return on_state(
          [this](Effects&, const UiViewer&) { return ui_json(200, ui_nodes(machine_)); },
          std::move(respond));
    }
    if (method == "POST" && first == "node" && n == 3 &&
        (parts[2] == "drain" || parts[2] == "resume")) {
      json body = json::object();
      if (!http_req.body.empty()) {
        body = json::parse(http_req.body, nullptr, false);
        if (!body.is_object()) return respond(ui_error(400, "the body is not a JSON object"));
      }
      std::string reason = body.contains("reason") && body["reason"].is_string()
                               ? body["reason"].get<std::string>()
                               : std::string();
      if (parts[2] == "drain" && reason.empty())
        return respond(ui_error(
            400, "You must specify a reason when DOWNING or DRAINING a node. Request denied"));
      // scontrol update NodeName=... State=DRAIN Reason=...: operators only, as there.
      const proto::NodeUpdateRequest req{
          .nodes = parts[1], .state = parts[2] == "drain" ? "DRAIN" : "RESUME", .reason = reason};
      return on_state(
          [this, req, now](Effects& fx, const UiViewer& v) {
            const json reply = machine_.node_update(req, v.who, now, fx);
            if (reply.value("ok", false)) return ui_json(200, {{"ok", true}});
            const proto::Error err = *proto::Error::from_reply(reply);
            return ui_error(err.code == proto::Errno::kUserIdMissing ? 403 : 400, err.message);
          },
          std::move(respond));
    }
    if (method == "GET" && n == 1 && first == "events") {
      net::HttpResponse r;
      r.content_type = "text/event-stream";
      r.headers.emplace_back("Cache-Control", "no-store");
      r.headers.emplace_back("X-Accel-Buffering", "no");
      // The stream opens once the state thread has said where the versions stand.
      const Caller caller = *auth.caller;
      // The stream ends when its token does (the page then asks for a new one).
      const int64_t expires =
          net::jwt_verify(token_key(key_), http_req.header("X-SLURM-USER-TOKEN"), now).expires;
      return on_state(
          [this, hub, tracker, r, caller, expires](Effects&, const UiViewer& v) mutable {
            // The tracker starts from what this page is about to fetch: changes after the
            // hello are then all reported, even those before the next tick.
            if (!tracker->primed()) tracker->prime(machine_);
            const K8sOperator* k = k8s_ui_.load();
            r.body = ui_hello_event(last_job_change_, tracker->node_version(),
                                    k != nullptr ? k->observed_version() : 0);
            r.on_stream = [hub, uid = caller.uid, expires, all = v.is_operator || !v.private_jobs](
                              std::shared_ptr<net::HttpStream> s) {
              hub->add({std::move(s), uid, all, expires});
            };
            return r;
          },
          std::move(respond));
    }
    respond(ui_error(404, "no such dashboard request: " + method + " " + http_req.path));
  };
  http.route_prefix("/ui/api/", handler);
}

}  // namespace drover::ctld
