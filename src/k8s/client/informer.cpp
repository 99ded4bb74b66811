#include "k8s/client/informer.hpp"

namespace drover::k8s {

namespace {
std::string rv_of(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  return obj["metadata"].value("resourceVersion", "");
}
}  // namespace

std::string Informer::key_of(const json& obj) {
  const json& md = obj.at("metadata");
  std::string ns = md.value("namespace", "");
  std::string name = md.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

Informer::Informer(Client& client, InformerOptions opts, InformerHandlers handlers)
    : client_(client), opts_(std::move(opts)), handlers_(std::move(handlers)) {}

Informer::~Informer() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void Informer::seed(const std::vector<json>& objects, const std::string& resource_version) {
  std::lock_guard lock(mu_);
  cache_.clear();
  for (const auto& o : objects) cache_[key_of(o)] = o;
  rv_ = resource_version;
  need_list_ = resource_version.empty();
}

void Informer::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void Informer::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
}

std::optional<json> Informer::get(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(ns.empty() ? name : ns + "/" + name);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> Informer::items() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  out.reserve(cache_.size());
  for (const auto& [k, v] : cache_) out.push_back(v);
  return out;
}

std::string Informer::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

bool Informer::sleep(std::chrono::milliseconds d) {
  std::unique_lock lock(stop_mu_);
  return !stop_cv_.wait_for(lock, d, [this] { return stop_.load(); });
}

void Informer::run() {
  int failures = 0;
  std::mt19937_64 rng{std::random_device{}()};
  while (!stop_) {
    try {
      bool list_now;
      {
        std::lock_guard lock(mu_);
        list_now = need_list_;
      }
      if (list_now) relist();
      if (stop_) break;
      auto started = std::chrono::steady_clock::now();
      long before = events_.load();
      if (!watch_once()) break;
      // A watch that ran a while, or brought events, ended normally: resume at once. One the
      // server closed at once with nothing is a failure, or we would spin.
      if (events_.load() > before ||
          std::chrono::steady_clock::now() - started > std::chrono::seconds(1)) {
        failures = 0;
      } else if (!sleep(opts_.backoff.delay(failures++, rng))) {
        break;
      }
    } catch (const ApiError& e) {
      if (is_gone(e)) {
        ++gone_;
        {
          std::lock_guard lock(mu_);
          need_list_ = true;
        }
        failures = 0;
        if (handlers_.on_error) handlers_.on_error(e);  // no lock held: it may call get()
        continue;  // re-list at once: the version is gone, waiting does not bring it back
      }
      if (handlers_.on_error) handlers_.on_error(e);
      if (!sleep(opts_.backoff.delay(failures++, rng))) break;
    } catch (const std::exception& e) {
      if (handlers_.on_error) handlers_.on_error(ApiError(500, "InternalError", e.what()));
      if (!sleep(opts_.backoff.delay(failures++, rng))) break;
    }
  }
}

void Informer::relist() {
  ListOptions lo;
  lo.label_selector = opts_.label_selector;
  lo.field_selector = opts_.field_selector;
  lo.limit = opts_.page_size;
  json list = client_.list_all(opts_.resource, opts_.ns, lo);

  std::map<std::string, json> fresh;
  for (auto& item : list["items"]) {
    // List items carry no kind/apiVersion; watch events do. Fill them in so handlers see one shape.
    if (!item.contains("apiVersion")) item["apiVersion"] = opts_.resource.api_version();
    if (!item.contains("kind") && list.contains("kind")) {
      std::string k = list.value("kind", "");
      if (k.size() > 4 && k.ends_with("List")) item["kind"] = k.substr(0, k.size() - 4);
    }
    std::string key = key_of(item);  // before the move: `a[f(x)] = move(x)` moves x first
    fresh[key] = std::move(item);
  }

  // The difference against the cache, computed under the lock, delivered without it.
  std::vector<json> added, deleted;
  std::vector<std::pair<json, json>> updated;
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, obj] : fresh) {
      auto it = cache_.find(k);
      if (it == cache_.end()) {
        added.push_back(obj);
      } else if (rv_of(it->second) != rv_of(obj)) {
        updated.emplace_back(it->second, obj);
      }
    }
    for (const auto& [k, obj] : cache_) {
      if (!fresh.count(k)) deleted.push_back(obj);
    }
    cache_ = std::move(fresh);
    rv_ = list["metadata"].value("resourceVersion", "");
    need_list_ = false;
  }
  ++lists_;
  for (const auto& o : deleted) {
    if (handlers_.on_delete) handlers_.on_delete(o);
  }
  for (const auto& o : added) {
    if (handlers_.on_add) handlers_.on_add(o);
  }
  for (const auto& [o, n] : updated) {
    if (handlers_.on_update) handlers_.on_update(o, n);
  }
  synced_ = true;
  if (handlers_.on_synced) handlers_.on_synced();
}

void Informer::apply_event(const json& ev) {
  ++events_;
  const std::string type = ev.value("type", "");
  const json& obj = ev.contains("object") ? ev["object"] : json();
  std::string rv = rv_of(obj);
  if (type == "BOOKMARK") {
    std::lock_guard lock(mu_);
    if (!rv.empty()) rv_ = rv;
    return;
  }
  if (!obj.is_object() || !obj.contains("metadata")) return;
  std::string key = key_of(obj);
  std::optional<json> old;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) old = it->second;
    if (type == "DELETED") {
      cache_.erase(key);
    } else {
      cache_[key] = obj;
    }
    if (!rv.empty()) rv_ = rv;
  }
  if (type == "DELETED") {
    if (handlers_.on_delete) handlers_.on_delete(obj);
  } else if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, obj);
  } else if (handlers_.on_add) {
    handlers_.on_add(obj);
  }
}

bool Informer::watch_once() {
  WatchOptions wo;
  wo.label_selector = opts_.label_selector;
  wo.field_selector = opts_.field_selector;
  wo.resource_version = resource_version();
  wo.allow_bookmarks = true;
  wo.timeout_seconds = opts_.watch_timeout_seconds;
  ++watches_;
  auto end = client_.watch(
      opts_.resource, opts_.ns, wo,
      [this](const json& ev) {
        apply_event(ev);
        return !stop_.load();
      },
      &stop_);
  return end == Client::WatchEnd::kClosed;
}

}  // namespace drover::k8s
