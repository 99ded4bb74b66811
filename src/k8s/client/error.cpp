#include "k8s/client/error.hpp"

#include <charconv>

namespace drover::k8s {

namespace {

std::string describe(long status, const std::string& reason, const std::string& message) {
  std::string s = status ? std::to_string(status) : std::string("transport error");
  if (!reason.empty()) s += " " + reason;
  if (!message.empty()) s += ": " + message;
  return s;
}

// The reason Kubernetes uses for a status code when the body does not say.
std::string default_reason(long status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

}  // namespace

ApiError::ApiError(long status, std::string reason, std::string message,
                   std::optional<std::chrono::seconds> retry_after)
    : std::runtime_error(describe(status, reason, message)),
      status_(status),
      reason_(std::move(reason)),
      message_(std::move(message)),
      retry_after_(retry_after) {}

ApiError ApiError::from_response(long status, const std::string& body,
                                 std::optional<std::chrono::seconds> retry_after) {
  nlohmann::json js = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (js.is_object() && js.value("kind", "") == "Status") {
    std::string reason = js.value("reason", "");
    if (reason.empty()) reason = default_reason(status);
    if (!retry_after && js.contains("details") && js["details"].is_object()) {
      long secs = js["details"].value("retryAfterSeconds", 0L);
      if (secs > 0) retry_after = std::chrono::seconds(secs);
    }
    return ApiError(status, std::move(reason), js.value("message", ""), retry_after);
  }
  std::string text = body.size() > 512 ? body.substr(0, 512) + "..." : body;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return ApiError(status, default_reason(status), text, retry_after);
}

ApiError ApiError::from_status(const nlohmann::json& st) {
  if (!st.is_object()) return ApiError(500, "InternalError", "malformed watch error event");
  long code = st.value("code", 500L);
  std::string reason = st.value("reason", "");
  if (reason.empty()) reason = default_reason(code);
  return ApiError(code, std::move(reason), st.value("message", ""));
}

ApiError ApiError::transport(const std::string& what) { return ApiError(0, "", what); }

bool is_not_found(const ApiError& e) { return e.status() == 404; }
bool is_conflict(const ApiError& e) { return e.status() == 409 && e.reason() != "AlreadyExists"; }
bool is_already_exists(const ApiError& e) {
  return e.status() == 409 && e.reason() == "AlreadyExists";
}
bool is_gone(const ApiError& e) {
  return e.status() == 410 || e.reason() == "Expired" || e.reason() == "Gone";
}
bool is_too_many_requests(const ApiError& e) { return e.status() == 429; }
bool is_unauthorized(const ApiError& e) { return e.status() == 401; }
bool retriable(const ApiError& e) {
  switch (e.status()) {
    case 0:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      return false;
  }
}

std::optional<std::chrono::seconds> parse_retry_after(const std::string& value) {
  size_t b = value.find_first_not_of(" \t");
  size_t e = value.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  long secs = 0;
  auto [p, ec] = std::from_chars(value.data() + b, value.data() + e + 1, secs);
  if (ec != std::errc() || p != value.data() + e + 1 || secs < 0) return std::nullopt;
  return std::chrono::seconds(secs);
}

}  // namespace drover::k8s
