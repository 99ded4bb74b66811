#include "k8s/client/resource.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "k8s/client/error.hpp"

namespace drover::k8s {
namespace {

TEST(ResourcePath, CoreAndNamedGroups) {
  using namespace resources;
  EXPECT_EQ(resource_path(kPods, "ns1"), "/api/v1/namespaces/ns1/pods");
  EXPECT_EQ(resource_path(kPods, "ns1", "p"), "/api/v1/namespaces/ns1/pods/p");
  EXPECT_EQ(resource_path(kPods, "ns1", "p", "eviction"), "/api/v1/namespaces/ns1/pods/p/eviction");
  EXPECT_EQ(resource_path(kPods, ""), "/api/v1/pods");  // all namespaces
  EXPECT_EQ(resource_path(kNodes, "", "n1"), "/api/v1/nodes/n1");
  EXPECT_EQ(resource_path(kLeases, "kube-node-lease", "n1"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1");
  Resource nodesets{"drover.io", "v1alpha1", "nodesets"};
  EXPECT_EQ(resource_path(nodesets, "hpc", "gpu", "scale"),
            "/apis/drover.io/v1alpha1/namespaces/hpc/nodesets/gpu/scale");
  EXPECT_EQ(resource_path(kCustomResourceDefinitions, "", "x.drover.io"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.drover.io");
  EXPECT_EQ(nodesets.api_version(), "drover.io/v1alpha1");
  EXPECT_EQ(kPods.api_version(), "v1");
}

TEST(ResourcePath, RejectsNamesThatEscapeThePath) {
  using namespace resources;
  EXPECT_THROW(resource_path(kPods, "ns", "../secrets"), std::invalid_argument);
  EXPECT_THROW(resource_path(kPods, "ns", ".."), std::invalid_argument);
  EXPECT_THROW(resource_path(kPods, "a/b", "p"), std::invalid_argument);
  EXPECT_THROW(resource_path(kPods, "ns", "p?x=1"), std::invalid_argument);
  EXPECT_THROW(resource_path(kPods, "ns", "p%2f"), std::invalid_argument);
  EXPECT_THROW(resource_path(kPods, "ns", "", "status"), std::invalid_argument);
  EXPECT_THROW(resource_path(kNodes, "ns", "n"), std::invalid_argument);  // cluster-scoped
}

TEST(Query, EncodesSelectorsAndOptions) {
  Query q;
  ListOptions lo;
  lo.label_selector = "app=drover,tier in (a,b)";
  lo.field_selector = "spec.nodeName=n1";
  lo.limit = 50;
  lo.continue_token = "abc+/=";
  lo.append_to(q);
  EXPECT_EQ(q.str(),
            "?labelSelector=app%3Ddrover%2Ctier%20in%20%28a%2Cb%29&fieldSelector=spec.nodeName%"
            "3Dn1&limit=50&continue="
            "abc%2B%2F%3D");
  EXPECT_EQ(Query{}.str(), "");

  Query w;
  WatchOptions wo;
  wo.resource_version = "123";
  wo.timeout_seconds = 60;
  wo.append_to(w);
  EXPECT_EQ(w.str(), "?watch=true&resourceVersion=123&allowWatchBookmarks=true&timeoutSeconds=60");
}

TEST(DeleteOptions, BodyCarriesPreconditionsAndPolicy) {
  EXPECT_EQ(DeleteOptions{}.body(), "");
  DeleteOptions d;
  d.grace_period_seconds = 0;
  d.propagation_policy = "Foreground";
  d.precondition_uid = "u-1";
  d.precondition_resource_version = "42";
  auto b = nlohmann::json::parse(d.body());
  EXPECT_EQ(b["kind"], "DeleteOptions");
  EXPECT_EQ(b["gracePeriodSeconds"], 0);
  EXPECT_EQ(b["propagationPolicy"], "Foreground");
  EXPECT_EQ(b["preconditions"]["uid"], "u-1");
  EXPECT_EQ(b["preconditions"]["resourceVersion"], "42");
}

TEST(PatchTypes, ContentTypes) {
  EXPECT_STREQ(content_type(PatchType::kMerge), "application/merge-patch+json");
  EXPECT_STREQ(content_type(PatchType::kStrategicMerge), "application/strategic-merge-patch+json");
  EXPECT_STREQ(content_type(PatchType::kJson), "application/json-patch+json");
}

TEST(ApiErrors, ParsesStatusObjects) {
  ApiError e = ApiError::from_response(
      409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be fulfilled on pods \"p\": the object has been modified","reason":"Conflict","code":409})");
  EXPECT_EQ(e.status(), 409);
  EXPECT_EQ(e.reason(), "Conflict");
  EXPECT_TRUE(is_conflict(e));
  EXPECT_FALSE(is_already_exists(e));
  EXPECT_FALSE(retriable(e));
  EXPECT_NE(std::string(e.what()).find("409 Conflict: Operation cannot be fulfilled"),
            std::string::npos);

  ApiError exists =
      ApiError::from_response(409, R"({"kind":"Status","reason":"AlreadyExists","message":"x"})");
  EXPECT_TRUE(is_already_exists(exists));
  EXPECT_FALSE(is_conflict(exists));

  ApiError gone = ApiError::from_status(nlohmann::json::parse(
      R"({"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"})"));
  EXPECT_TRUE(is_gone(gone));
  EXPECT_EQ(gone.message(), "too old resource version");

  ApiError throttled = ApiError::from_response(
      429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":3}})");
  EXPECT_TRUE(is_too_many_requests(throttled));
  EXPECT_TRUE(retriable(throttled));
  ASSERT_TRUE(throttled.retry_after());
  EXPECT_EQ(throttled.retry_after()->count(), 3);
}

TEST(ApiErrors, NonStatusBodiesAndTransport) {
  ApiError e = ApiError::from_response(503, "upstream connect error\n");
  EXPECT_EQ(e.reason(), "ServiceUnavailable");
  EXPECT_EQ(e.message(), "upstream connect error");
  EXPECT_TRUE(retriable(e));
  EXPECT_TRUE(is_not_found(ApiError::from_response(404, "")));
  ApiError t = ApiError::transport("Couldn't connect to server");
  EXPECT_EQ(t.status(), 0);
  EXPECT_TRUE(retriable(t));
  EXPECT_FALSE(retriable(ApiError::from_response(422, "{}")));
}

TEST(ApiErrors, RetryAfterHeader) {
  EXPECT_EQ(parse_retry_after(" 7\r\n")->count(), 7);
  EXPECT_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_FALSE(parse_retry_after(""));
}

}  // namespace
}  // namespace drover::k8s
