#include "k8s/client/leader.hpp"

#include "k8s/client/events.hpp"

namespace drover::k8s {

namespace {
long whole_seconds(std::chrono::milliseconds d) {
  return std::max<long>(
      1, static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(d).count()));
}
}  // namespace

LeaderElector::LeaderElector(Client& client, LeaderElectionOptions opts, LeaderCallbacks cb)
    : client_(client), opts_(std::move(opts)), cb_(std::move(cb)) {
  if (opts_.identity.empty() || opts_.name.empty() || opts_.ns.empty()) {
    throw std::invalid_argument("leader election needs a namespace, a Lease name and an identity");
  }
}

LeaderElector::~LeaderElector() { stop(); }

std::string LeaderElector::leader() const {
  std::lock_guard lock(mu_);
  return observed_holder_;
}

void LeaderElector::observe(const json& lease) {
  const json& spec = lease.contains("spec") ? lease["spec"] : json::object();
  std::string holder = spec.value("holderIdentity", "");
  std::string renew = spec.value("renewTime", "");
  bool new_holder = false;
  {
    std::lock_guard lock(mu_);
    if (holder != observed_holder_ || renew != observed_renew_) {
      new_holder = holder != observed_holder_;
      observed_holder_ = holder;
      observed_renew_ = renew;
      observed_at_ = std::chrono::steady_clock::now();
    }
  }
  if (new_holder && !holder.empty() && cb_.on_new_leader) cb_.on_new_leader(holder);
}

bool LeaderElector::try_acquire_or_renew() {
  std::string now = EventRecorder::micro_time(std::chrono::system_clock::now());
  json lease;
  try {
    lease = client_.get(resources::kLeases, opts_.ns, opts_.name);
  } catch (const ApiError& e) {
    if (!is_not_found(e)) throw;
    json fresh = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", opts_.name}, {"namespace", opts_.ns}}},
                  {"spec",
                   {{"holderIdentity", opts_.identity},
                    {"leaseDurationSeconds", whole_seconds(opts_.lease_duration)},
                    {"acquireTime", now},
                    {"renewTime", now},
                    {"leaseTransitions", 0}}}};
    try {
      observe(client_.create(resources::kLeases, opts_.ns, fresh));
      return true;
    } catch (const ApiError& ce) {
      if (is_already_exists(ce)) return false;  // another replica created it first
      throw;
    }
  }
  observe(lease);
  json& spec = lease["spec"];
  std::string holder = spec.value("holderIdentity", "");
  {
    std::lock_guard lock(mu_);
    bool expired = std::chrono::steady_clock::now() - observed_at_ > opts_.lease_duration;
    if (!holder.empty() && holder != opts_.identity && !expired) return false;
  }
  if (holder != opts_.identity) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  spec["holderIdentity"] = opts_.identity;
  spec["leaseDurationSeconds"] = whole_seconds(opts_.lease_duration);
  spec["renewTime"] = now;
  try {
    observe(
        client_.replace(resources::kLeases, opts_.ns, lease));  // resourceVersion: compare-and-swap
    return true;
  } catch (const ApiError& e) {
    if (is_conflict(e)) return false;
    throw;
  }
}

void LeaderElector::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
}

void LeaderElector::run() {
  auto last_renew = std::chrono::steady_clock::now();
  while (!stop_) {
    bool held = false;
    try {
      held = try_acquire_or_renew();
    } catch (const ApiError&) {
      held = false;  // the server is unreachable: keep leading until renew_deadline
    }
    auto now = std::chrono::steady_clock::now();
    if (held) {
      last_renew = now;
      if (!leading_.exchange(true) && cb_.on_started_leading) cb_.on_started_leading();
    } else if (leading_) {
      bool taken = !leader().empty() && leader() != opts_.identity;
      if (taken || now - last_renew > opts_.renew_deadline) {
        leading_ = false;
        if (cb_.on_stopped_leading) cb_.on_stopped_leading();
      }
    }
    std::unique_lock lock(stop_mu_);
    stop_cv_.wait_for(lock, opts_.retry_period, [this] { return stop_.load(); });
  }
  if (leading_.exchange(false)) {
    release();
    if (cb_.on_stopped_leading) cb_.on_stopped_leading();
  }
}

void LeaderElector::release() {
  try {
    json lease = client_.get(resources::kLeases, opts_.ns, opts_.name);
    if (lease["spec"].value("holderIdentity", "") != opts_.identity) return;
    lease["spec"]["holderIdentity"] = "";
    lease["spec"]["leaseDurationSeconds"] = 1;
    lease["spec"]["renewTime"] = EventRecorder::micro_time(std::chrono::system_clock::now());
    client_.replace(resources::kLeases, opts_.ns, lease);
  } catch (const ApiError&) {
    // Not released: the other replica takes over after lease_duration instead.
  }
}

}  // namespace drover::k8s
