#include "k8s/client/client.hpp"

#include <curl/curl.h>
#include <sys/stat.h>

#include <cctype>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

namespace drover::k8s {

void sleep_for_retry(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

std::mt19937_64& retry_rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

namespace {

// Retry-After is honoured, within reason: a misbehaving proxy must not park a caller for hours.
constexpr std::chrono::seconds kMaxRetryAfter{60};
constexpr size_t kMaxIdleHandles = 8;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string read_token(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

struct Headers {
  curl_slist* list = nullptr;
  ~Headers() { curl_slist_free_all(list); }
  void add(const std::string& h) { list = curl_slist_append(list, h.c_str()); }
};

// What one transfer collected: status, body, Retry-After.
struct Transfer {
  long status = 0;
  std::string body;
  std::optional<std::chrono::seconds> retry_after;
};

size_t on_header(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  std::string_view h(data, size * n);
  constexpr std::string_view key = "retry-after:";
  if (h.size() > key.size()) {
    bool match = true;
    for (size_t i = 0; i < key.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(h[i])) != key[i]) match = false;
    }
    if (match) t->retry_after = parse_retry_after(std::string(h.substr(key.size())));
  }
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* p) {
  static_cast<Transfer*>(p)->body.append(data, size * n);
  return size * n;
}

bool idempotent(const std::string& method) { return method != "POST"; }

}  // namespace

struct Client::Impl {
  explicit Impl(const Config& c) : cfg(c), bucket(c.qps, c.burst) {}
  ~Impl() {
    for (CURL* h : idle) curl_easy_cleanup(h);
  }

  const Config& cfg;
  TokenBucket bucket;

  std::mutex pool_mu;
  std::vector<CURL*> idle;

  // The bearer token: fixed, or the file's content, re-read when the file changes (a
  // projected service-account token is replaced through a symlink swap, so stat() follows it).
  std::mutex token_mu;
  std::string file_token;
  struct stat file_stat {};
  bool file_read = false;

  std::string token(bool force_reread) {
    if (cfg.token_file.empty()) return cfg.token;
    std::lock_guard lock(token_mu);
    struct stat st {};
    if (::stat(cfg.token_file.c_str(), &st) != 0) return file_read ? file_token : cfg.token;
    bool changed = !file_read || st.st_ino != file_stat.st_ino || st.st_size != file_stat.st_size ||
                   st.st_mtim.tv_sec != file_stat.st_mtim.tv_sec ||
                   st.st_mtim.tv_nsec != file_stat.st_mtim.tv_nsec;
    if (changed || force_reread) {
      file_token = read_token(cfg.token_file);
      file_stat = st;
      file_read = true;
    }
    return file_token;
  }

  CURL* acquire() {
    {
      std::lock_guard lock(pool_mu);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (!h) throw ApiError::transport("curl_easy_init failed");
    return h;
  }

  void release(CURL* h) {
    curl_easy_reset(h);  // keeps the handle's live connections
    std::lock_guard lock(pool_mu);
    if (idle.size() < kMaxIdleHandles) {
      idle.push_back(h);
    } else {
      curl_easy_cleanup(h);
    }
  }

  // Options every request shares; `hdrs` must outlive the transfer.
  void setup(CURL* h, const std::string& method, const std::string& url, Headers& hdrs,
             const std::string& content_type, bool force_token) {
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    // HTTP/1.1: libcurl 7.88 fails a POST on an HTTP/2 connection that has answered 401
    // ("Transferred a partial file"); and on 1.1 each watch has its own connection, so a busy
    // stream never delays requests.
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(cfg.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_USERAGENT, cfg.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
    if (cfg.insecure_skip_tls_verify) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
      if (!cfg.ca_data.empty()) {
        curl_blob blob{const_cast<char*>(cfg.ca_data.data()), cfg.ca_data.size(), CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
      } else if (!cfg.ca_file.empty()) {
        curl_easy_setopt(h, CURLOPT_CAINFO, cfg.ca_file.c_str());
      }
    }
    if (!cfg.client_cert_data.empty()) {
      curl_blob blob{const_cast<char*>(cfg.client_cert_data.data()), cfg.client_cert_data.size(),
                     CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!cfg.client_cert_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLCERT, cfg.client_cert_file.c_str());
    }
    if (!cfg.client_key_data.empty()) {
      curl_blob blob{const_cast<char*>(cfg.client_key_data.data()), cfg.client_key_data.size(),
                     CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!cfg.client_key_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLKEY, cfg.client_key_file.c_str());
    }
    std::string tok = token(force_token);
    if (!tok.empty()) hdrs.add("Authorization: Bearer " + tok);
    hdrs.add("Accept: application/json");
    if (!content_type.empty()) hdrs.add("Content-Type: " + content_type);
    hdrs.add("Expect:");  // no 100-continue round trip before larger bodies
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs.list);
  }
};

Client::Client(Config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.server.empty()) throw ConfigError("Kubernetes client: no server configured");
  global_init();
  impl_ = std::make_unique<Impl>(cfg_);
}

Client::~Client() = default;

Response Client::request(const std::string& method, const std::string& path,
                         const std::string& body, const std::string& content_type) {
  const std::string url = cfg_.server + path;
  Backoff backoff;
  bool reauthed = false;
  for (int attempt = 0;; ++attempt) {
    impl_->bucket.acquire();
    CURL* h = impl_->acquire();
    Transfer t;
    Headers hdrs;
    CURLcode rc;
    try {
      impl_->setup(h, method, url, hdrs, body.empty() ? "" : content_type, reauthed);
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(cfg_.timeout.count()));
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
      curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
      curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
      if (!body.empty()) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      }
      ++sent_;
      rc = curl_easy_perform(h);
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.status);
    } catch (...) {
      impl_->release(h);
      throw;
    }
    impl_->release(h);

    std::optional<ApiError> err;
    bool may_retry = false;
    if (rc != CURLE_OK) {
      err = ApiError::transport(method + " " + path + ": " + curl_easy_strerror(rc));
      // A request that never reached the server can always be repeated.
      bool never_sent = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                        rc == CURLE_SSL_CONNECT_ERROR;
      may_retry = idempotent(method) || never_sent;
    } else if (t.status >= 200 && t.status < 300) {
      return Response{t.status, std::move(t.body)};
    } else {
      err = ApiError::from_response(t.status, t.body, t.retry_after);
      may_retry = retriable(*err);
      // A rotated token file: re-read it at once rather than waiting for its mtime to show.
      if (t.status == 401 && !cfg_.token_file.empty() && !reauthed) {
        reauthed = true;
        --attempt;
        continue;
      }
    }
    if (!may_retry || attempt >= cfg_.max_retries) throw *err;
    std::chrono::milliseconds wait = backoff.delay(attempt, retry_rng());
    if (err->retry_after())
      wait = std::min<std::chrono::milliseconds>(*err->retry_after(), kMaxRetryAfter);
    sleep_for_retry(wait);
  }
}

json Client::get(const Resource& r, const std::string& ns, const std::string& name,
                 const std::string& sub) {
  return request("GET", resource_path(r, ns, name, sub)).js();
}

json Client::list(const Resource& r, const std::string& ns, const ListOptions& opts) {
  Query q;
  opts.append_to(q);
  return request("GET", resource_path(r, ns) + q.str()).js();
}

json Client::list_all(const Resource& r, const std::string& ns, ListOptions opts) {
  json all;
  try {
    for (;;) {
      json page = list(r, ns, opts);
      if (all.is_null()) {
        all = page;
      } else {
        for (auto& item : page["items"]) all["items"].push_back(std::move(item));
      }
      std::string cont = page.contains("metadata") ? page["metadata"].value("continue", "") : "";
      if (cont.empty()) break;
      opts.continue_token = cont;
      opts.resource_version.clear();  // the token carries the snapshot's version
      opts.resource_version_match.clear();
    }
  } catch (const ApiError& e) {
    if (!is_gone(e) || opts.continue_token.empty()) throw;
    opts.continue_token.clear();
    opts.limit = 0;
    return list(r, ns, opts);
  }
  if (all.contains("metadata")) all["metadata"].erase("continue");
  return all;
}

json Client::create(const Resource& r, const std::string& ns, const json& obj,
                    const WriteOptions& w) {
  Query q;
  w.append_to(q);
  return request("POST", resource_path(r, ns) + q.str(), obj.dump()).js();
}

namespace {
std::string name_of(const json& obj) {
  std::string name = obj.contains("metadata") && obj["metadata"].is_object()
                         ? obj["metadata"].value("name", "")
                         : "";
  if (name.empty()) throw std::invalid_argument("the object has no metadata.name");
  return name;
}
}  // namespace

json Client::replace(const Resource& r, const std::string& ns, const json& obj,
                     const WriteOptions& w) {
  Query q;
  w.append_to(q);
  return request("PUT", resource_path(r, ns, name_of(obj)) + q.str(), obj.dump()).js();
}

json Client::replace_status(const Resource& r, const std::string& ns, const json& obj,
                            const WriteOptions& w) {
  Query q;
  w.append_to(q);
  return request("PUT", resource_path(r, ns, name_of(obj), "status") + q.str(), obj.dump()).js();
}

json Client::patch(const Resource& r, const std::string& ns, const std::string& name,
                   PatchType type, const json& p, const std::string& sub, const WriteOptions& w) {
  Query q;
  w.append_to(q);
  return request("PATCH", resource_path(r, ns, name, sub) + q.str(), p.dump(), content_type(type))
      .js();
}

json Client::apply(const Resource& r, const std::string& ns, const json& obj,
                   const ApplyOptions& opts, const std::string& sub) {
  if (opts.field_manager.empty())
    throw std::invalid_argument("server-side apply needs a field manager");
  Query q;
  q.add("fieldManager", opts.field_manager);
  if (opts.force) q.add("force", "true");
  if (opts.dry_run) q.add("dryRun", "All");
  return request("PATCH", resource_path(r, ns, name_of(obj), sub) + q.str(), obj.dump(),
                 "application/apply-patch+yaml")
      .js();
}

json Client::remove(const Resource& r, const std::string& ns, const std::string& name,
                    const DeleteOptions& opts) {
  return request("DELETE", resource_path(r, ns, name), opts.body()).js();
}

json Client::evict(const std::string& ns, const std::string& pod, const DeleteOptions& opts) {
  json ev = {{"apiVersion", "policy/v1"},
             {"kind", "Eviction"},
             {"metadata", {{"name", pod}, {"namespace", ns}}}};
  if (std::string b = opts.body(); !b.empty()) ev["deleteOptions"] = json::parse(b);
  return request("POST", resource_path(resources::kPods, ns, pod, "eviction"), ev.dump()).js();
}

namespace {

struct WatchState {
  WatchState(const std::function<bool(const json&)>* e, const std::atomic<bool>* s, CURL* c)
      : on_event(e), stop(s), h(c) {}
  const std::function<bool(const json&)>* on_event;
  const std::atomic<bool>* stop;
  CURL* h;
  long status = 0;
  std::string error_body;
  LineSplitter lines;
  bool handled = false;
  std::exception_ptr failure;
};

size_t on_watch_body(char* data, size_t size, size_t n, void* p) {
  auto* st = static_cast<WatchState*>(p);
  size_t len = size * n;
  if (st->status == 0) curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &st->status);
  if (st->status != 200) {
    if (st->error_body.size() < (1 << 20)) st->error_body.append(data, len);
    return len;
  }
  try {
    bool go_on = st->lines.feed(std::string_view(data, len), [&](std::string_view line) {
      json ev = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!ev.is_object()) throw ApiError(500, "InternalError", "watch: malformed event line");
      if (ev.value("type", "") == "ERROR") throw ApiError::from_status(ev.value("object", json()));
      if ((*st->on_event)(ev)) return true;
      st->handled = true;
      return false;
    });
    return go_on ? len : 0;
  } catch (...) {
    st->failure = std::current_exception();
    return 0;  // aborts the transfer
  }
}

int on_watch_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<WatchState*>(p);
  return st->stop && st->stop->load() ? 1 : 0;
}

}  // namespace

Client::WatchEnd Client::watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                               const std::function<bool(const json&)>& on_event,
                               const std::atomic<bool>* stop) {
  Query q;
  opts.append_to(q);
  const std::string path = resource_path(r, ns) + q.str();
  impl_->bucket.acquire();
  if (stop && stop->load()) return WatchEnd::kStopped;
  CURL* h = impl_->acquire();
  WatchState st(&on_event, stop, h);
  Headers hdrs;
  CURLcode rc;
  try {
    impl_->setup(h, "GET", cfg_.server + path, hdrs, "", false);
    // The server ends the watch after timeoutSeconds; a dead peer is found by TCP keepalive.
    if (opts.timeout_seconds > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT, opts.timeout_seconds + 30L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_watch_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_watch_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &st);
    ++sent_;
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st.status);
  } catch (...) {
    impl_->release(h);
    throw;
  }
  impl_->release(h);
  if (st.failure) std::rethrow_exception(st.failure);
  if (st.handled) return WatchEnd::kHandled;
  if (rc == CURLE_ABORTED_BY_CALLBACK) return WatchEnd::kStopped;
  if (st.status != 0 && st.status != 200) throw ApiError::from_response(st.status, st.error_body);
  if (rc == CURLE_OK) return WatchEnd::kClosed;
  throw ApiError::transport("watch " + path + ": " + curl_easy_strerror(rc));
}

}  // namespace drover::k8s
