#include "ctld/ui_web.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace drover::ctld {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ui_find_web_root(const std::string& configured, const std::string& exe_path) {
  auto has_index = [](const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "index.html", ec);
  };
  if (!configured.empty()) return has_index(configured) ? configured : "";
  if (exe_path.empty()) return "";
  const fs::path bin = fs::path(exe_path).parent_path();
  // The installed layout, which the build tree mirrors.
  const fs::path dir = bin / ".." / "share" / "drover" / "web";
  if (!has_index(dir)) return "";
  std::error_code ec;
  const fs::path canon = fs::canonical(dir, ec);
  return ec ? dir.string() : canon.string();
}

namespace {

std::string content_type_for(const std::string& ext) {
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  return "application/octet-stream";
}

bool read_file(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

void security_headers(net::HttpResponse& r) {
  // Everything is bundled: the page loads nothing from elsewhere, and no other site frames it.
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; style-src 'self' "
                         "'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
}

}  // namespace

net::HttpResponse ui_static_file(const std::string& root, const std::string& path) {
  net::HttpResponse r;
  security_headers(r);
  if (root.empty()) {
    r.status = 404;
    r.body =
        "The dashboard is not built: build drover with npm present (DROVER_WEB=ON), or set "
        "DroverWebRoot in slurm.conf to the directory holding its index.html.\n";
    return r;
  }
  // "/ui/assets/x.js" -> "assets/x.js"; nothing that climbs out of the root or is hidden.
  std::string rel = path.size() > 4 ? path.substr(4) : "";
  bool bad = rel.find('\\') != std::string::npos || rel.find('\0') != std::string::npos;
  for (const auto& part : fs::path(rel))
    if (part == ".." || (!part.empty() && part.string().front() == '.')) bad = true;
  if (bad) {
    r.status = 404;
    r.body = "404 Not Found\n";
    return r;
  }
  const bool asset = rel.rfind("assets/", 0) == 0;
  fs::path file = fs::path(root) / rel;
  std::error_code ec;
  if (rel.empty() || !fs::is_regular_file(file, ec)) {
    if (asset || fs::path(rel).has_extension()) {
      r.status = 404;
      r.body = "404 Not Found: " + path + "\n";
      return r;
    }
    file = fs::path(root) / "index.html";  // the app's own routes
  }
  if (!read_file(file, r.body)) {
    r.status = 404;
    r.body = "404 Not Found: " + path + "\n";
    return r;
  }
  r.content_type = content_type_for(file.extension().string());
  // Assets carry a content hash in their names; index.html must be fetched anew each time.
  r.headers.emplace_back("Cache-Control",
                         asset ? "public, max-age=31536000, immutable" : "no-cache");
  return r;
}

void UiEventHub::add(Subscriber s) {
  std::lock_guard lock(mu_);
  subs_.push_back(std::move(s));
}

void UiEventHub::prune() {
  const int64_t now = std::time(nullptr);
  std::erase_if(subs_, [now](const Subscriber& s) {
    if (s.expires > 0 && now >= s.expires) s.stream->close();
    return s.stream->closed();
  });
}

size_t UiEventHub::size() {
  std::lock_guard lock(mu_);
  prune();
  return subs_.size();
}

std::string ui_hello_event(int64_t job_version, uint64_t node_version, uint64_t k8s_version) {
  return "retry: 2000\nevent: hello\ndata: " +
         json{{"jobs", job_version}, {"nodes", node_version}, {"k8s", k8s_version}}.dump() + "\n\n";
}

void UiEventHub::publish(const std::vector<std::pair<uint64_t, uint32_t>>& jobs,
                         int64_t job_version, bool nodes, uint64_t node_version) {
  // A page shows at most a few hundred jobs: beyond this many ids it refetches its page.
  constexpr size_t kMaxIds = 500;
  const std::string node_event =
      nodes ? "event: nodes\ndata: " + json{{"version", node_version}}.dump() + "\n\n" : "";
  std::string all_jobs_event;
  if (!jobs.empty()) {
    json e = {{"version", job_version}};
    if (jobs.size() <= kMaxIds) {
      e["ids"] = json::array();
      for (const auto& [id, uid] : jobs) e["ids"].push_back(id);
    }
    all_jobs_event = "event: jobs\ndata: " + e.dump() + "\n\n";
  }
  std::lock_guard lock(mu_);
  prune();
  for (auto& s : subs_) {
    std::string text = node_event;
    if (s.all_jobs) {
      text += all_jobs_event;
    } else if (!jobs.empty()) {
      json ids = json::array();
      for (const auto& [id, uid] : jobs)
        if (uid == s.uid) ids.push_back(id);
      if (!ids.empty() && ids.size() <= kMaxIds)
        text +=
            "event: jobs\ndata: " + json{{"version", job_version}, {"ids", ids}}.dump() + "\n\n";
      else if (!ids.empty())
        text += "event: jobs\ndata: " + json{{"version", job_version}}.dump() + "\n\n";
    }
    if (!text.empty()) s.stream->send(std::move(text));
  }
}

void UiEventHub::publish_k8s(uint64_t version) {
  const std::string text = "event: k8s\ndata: " + json{{"version", version}}.dump() + "\n\n";
  std::lock_guard lock(mu_);
  prune();
  for (auto& s : subs_) s.stream->send(text);
}

void UiEventHub::heartbeat() {
  std::lock_guard lock(mu_);
  prune();
  for (auto& s : subs_) s.stream->send(": keep-alive\n\n");
}

}  // namespace drover::ctld

namespace drover::ctld {

json ui_read_tail(const std::string& path, uint32_t owner, size_t max_bytes) {
  auto fail = [&](const std::string& why) { return json{{"path", path}, {"error", why}}; };
  if (path.empty() || path.front() != '/') return fail("the job has no output file");
  max_bytes = std::clamp<size_t>(max_bytes, 1, kUiTailMax);
  // lstat first: a device or FIFO is never opened (opening one can have effects of its own).
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return fail(std::string("cannot read it: ") + std::strerror(errno));
    json out = fail("no such file (yet) where the controller looks");
    out["missing"] = true;
    return out;
  }
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  if (st.st_uid != owner) return fail("the file does not belong to the job's owner");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot read it: ") + std::strerror(errno));
  struct stat fst {};
  std::string text;
  json out;
  if (::fstat(fd, &fst) != 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
      !S_ISREG(fst.st_mode) || fst.st_uid != owner) {
    out = fail("the file changed while it was opened");
  } else {
    const auto size = static_cast<size_t>(fst.st_size);
    const size_t offset = size > max_bytes ? size - max_bytes : 0;
    text.resize(size - offset);
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n =
          ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
    // A cut in the middle of a line (or of a UTF-8 sequence): start at the next line.
    size_t skip = 0;
    if (offset > 0)
      if (const size_t nl = text.find('\n'); nl != std::string::npos && nl + 1 < text.size())
        skip = nl + 1;
    out = {{"path", path},
           {"size", size},
           {"offset", offset + skip},
           {"truncated", offset + skip > 0},
           {"text", text.substr(skip)}};
  }
  ::close(fd);
  return out;
}

UiFileReader::UiFileReader() : thread_([s = state_] { loop(s); }) {}

UiFileReader::~UiFileReader() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
    state_->queue.clear();
  }
  state_->cv.notify_all();
  // A read stuck in a hung file system must not hold up the controller's exit.
  if (thread_.joinable()) thread_.detach();
}

bool UiFileReader::post(std::function<void()> read) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopping || state_->queue.size() >= kMaxQueued) return false;
    state_->queue.push_back(std::move(read));
  }
  state_->cv.notify_one();
  return true;
}

void UiFileReader::loop(std::shared_ptr<State> s) {
  for (;;) {
    std::function<void()> read;
    {
      std::unique_lock lock(s->mu);
      s->cv.wait(lock, [&] { return s->stopping || !s->queue.empty(); });
      if (s->stopping) return;
      read = std::move(s->queue.front());
      s->queue.pop_front();
    }
    read();
  }
}

}  // namespace drover::ctld
