// The Kubernetes operator's place in the controller: its thread asks the state thread for a
// snapshot of the nodes (a read-only task after a batch, as metrics are) and sends drover
// commands as Task events run inside a batch with the operator's caller, answered only after
// the batch is committed, so the operator's drains and deletions are journaled as scontrol's.
// The autoscaler's what-if pass is such a read-only task too, on the controller's own view.
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <future>
#include <stdexcept>

#include "ctld/client_request.hpp"
#include "ctld/k8s_snapshot.hpp"
#include "ctld/server.hpp"

namespace drover::ctld {

class Server::K8sHost : public K8sOperatorHost {
 public:
  explicit K8sHost(Server& s) : s_(s) {}

  k8s::op::ControllerSnapshot snapshot() override {
    auto p = std::make_shared<std::promise<k8s::op::ControllerSnapshot>>();
    auto f = p->get_future();
    {
      std::lock_guard lock(s_.mu_);
      s_.tasks_.push_back([this, p] { p->set_value(k8s_snapshot(s_.machine_, s_.started_at_)); });
    }
    s_.cv_.notify_one();
    return wait(f);
  }

  sched::AutoscaleDecision autoscale(std::vector<AutoscaleSet> sets, int64_t now) override {
    auto p = std::make_shared<std::promise<sched::AutoscaleDecision>>();
    auto f = p->get_future();
    {
      std::lock_guard lock(s_.mu_);
      s_.tasks_.push_back([this, p, sets = std::move(sets), now]() mutable {
        try {
          p->set_value(autoscale_decide(s_.machine_, planner_, std::move(sets), now));
        } catch (...) {
          p->set_exception(std::current_exception());
        }
      });
    }
    s_.cv_.notify_one();
    return wait(f);
  }

  json command(const proto::Request& req) override {
    auto p = std::make_shared<std::promise<json>>();
    auto f = p->get_future();
    Event ev{Event::Task, nullptr, {}, k8s_operator_caller(), {}};
    ev.apply = [this, req, p](Effects& fx) -> std::function<void()> {
      json reply;
      try {
        std::string text;
        auto r = apply_client_request(s_.machine_, req, k8s_operator_caller(), std::time(nullptr),
                                      fx, text);
        reply = r ? std::move(*r) : proto::Error(proto::Errno::kError, "Unknown request").reply();
      } catch (const std::exception& e) {
        reply = proto::Error(proto::Errno::kInternal, std::string("Invalid request: ") + e.what())
                    .reply();
      }
      return [p, reply = std::move(reply)] { p->set_value(reply); };
    };
    s_.post(std::move(ev));
    return wait(f);
  }

 private:
  // The state thread ends before the operator on shutdown: no answer is then coming.
  template <class T>
  T wait(std::future<T>& f) {
    while (f.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
      if (s_.stopping_) throw std::runtime_error("controller shutting down");
    return f.get();
  }
  Server& s_;
  // Used on the state thread only (in tasks), one decision at a time.
  sched::Autoscaler planner_;
};

void Server::start_k8s_operator() {
  auto cfg = k8s_operator_config(config_.conf, key_);
  if (!cfg) return;
  k8s_host_ = std::make_unique<K8sHost>(*this);
  k8s_operator_ = std::make_unique<K8sOperator>(std::move(*cfg), *k8s_host_);
  k8s_operator_->start();
  k8s_ui_ = k8s_operator_.get();
}

}  // namespace drover::ctld
