// The REST API's place in the controller: requests are authenticated on the I/O thread (only
// the token key is needed, so unauthenticated floods never reach the state thread), then
// answered inside the state thread's batch with the token's user as the caller; an answer that
// changed something goes out only after its batch is committed, like the CLI's replies.
#include <ctime>

#include "ctld/rest_api.hpp"
#include "ctld/rest_auth.hpp"
#include "ctld/server.hpp"

namespace drover::ctld {

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
    std::vector<store::JobRecord> acct_jobs(const store::JobFilter& filter) override {
      return s_.acct_->query(filter);
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
