// The REST API's place in the controller: requests are authenticated on the I/O thread (only
// the token key is needed, so unauthenticated floods never reach the state thread), then
// answered inside the state thread's batch with the token's user as the caller; an answer that
// changed something goes out only after its batch is committed, like the CLI's replies.
#include <ctime>
#include <memory>
#include <stdexcept>

#include "ctld/rest_api.hpp"
#include "ctld/rest_auth.hpp"
#include "ctld/server.hpp"

namespace drover::ctld {

// Job records from the accounting store, on its own thread: the state thread only hands over
// what the answer needs of its state (the configuration, the scheduler's figures, the times).
void Server::answer_from_accounting(const RestRequest& req, const Caller& caller, int64_t now,
                                    std::function<void(const RestResponse&)> send) {
  class AccountingBackend : public RestBackend {
   public:
    AccountingBackend(store::AccountingStore& store, SchedStats stats)
        : store_(store), stats_(stats) {}
    json query(const json&) override { throw std::logic_error("query on the accounting thread"); }
    json submit(const json&, const Caller&) override {
      throw std::logic_error("submit on the accounting thread");
    }
    json cancel(const json&, const Caller&) override {
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
    json query(const json& req) override { return s_.machine_.query(req, now_); }
    json submit(const json& req, const Caller& who) override {
      json r = s_.machine_.submit(req, who, now_, fx_);
      if (r.value("ok", false)) ++s_.sched_stats_.jobs_submitted;
      return r;
    }
    json cancel(const json& req, const Caller& who) override {
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
}

}  // namespace drover::ctld
