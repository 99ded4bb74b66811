#include "proto/decode.hpp"

#include <gtest/gtest.h>

using namespace drover;
using nlohmann::json;

TEST(Decode, RefusesWhatIsNotAnObject) {
  EXPECT_THROW(proto::decode_object("[1,2]"), proto::BadMessage);
  EXPECT_THROW(proto::decode_object("5"), proto::BadMessage);
  EXPECT_THROW(proto::decode_object("{\"op\":"), proto::BadMessage);
  EXPECT_THROW(proto::decode_object(""), proto::BadMessage);
  EXPECT_EQ(proto::decode_object("{\"op\":\"query\"}")["op"], "query");
  // The parser would stop at the NUL and take the object before it.
  EXPECT_THROW(proto::decode_object(std::string_view("{\"op\":\"query\"}\0[[[", 18)),
               proto::BadMessage);
  EXPECT_EQ(proto::decode_object("{\"s\":\"a\\u0000b\"}")["s"], std::string("a\0b", 3));
}

TEST(Decode, RefusesDeepNestingBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THROW(proto::decode_object(deep), proto::BadMessage);
  const std::string wrapped = "{\"a\":" + deep + "}";
  EXPECT_THROW(proto::decode_object(wrapped), proto::BadMessage);
  // Brackets inside strings are text, not nesting.
  const std::string in_string = "{\"a\":\"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_NO_THROW(proto::decode_object(in_string));
  std::string ok = "{\"a\":" + std::string(60, '[') + std::string(60, ']') + "}";
  EXPECT_NO_THROW(proto::decode_object(ok));
}

TEST(Decode, FieldsMustHaveTheirType) {
  const json msg = json::parse(R"({"op":5,"s":"x","n":-1,"u":7,"b":true,"z":null})");
  EXPECT_THROW(proto::get_string(msg, "op"), proto::BadMessage);
  EXPECT_EQ(proto::get_string(msg, "s"), "x");
  EXPECT_EQ(proto::get_string(msg, "missing", "d"), "d");
  EXPECT_EQ(proto::get_string(msg, "z", "d"), "d");
  EXPECT_EQ(proto::get_int(msg, "n"), -1);
  EXPECT_THROW(proto::get_uint(msg, "n"), proto::BadMessage);
  EXPECT_EQ(proto::get_uint(msg, "u"), 7u);
  EXPECT_THROW(proto::get_bool(msg, "u"), proto::BadMessage);
  EXPECT_TRUE(proto::get_bool(msg, "b"));
  EXPECT_THROW(proto::need_uint(msg, "missing"), proto::BadMessage);
  EXPECT_THROW(proto::get_string(json::array(), "op"), proto::BadMessage);
  EXPECT_THROW(proto::get_int(json::parse(R"({"n":18446744073709551615})"), "n"),
               proto::BadMessage);
}

TEST(Decode, DumpReplacesInvalidUtf8) {
  const json j = {{"name", std::string("a\xff\xfe"
                                       "b")}};
  EXPECT_THROW((void)j.dump(), json::type_error);
  EXPECT_EQ(proto::dump(j),
            "{\"name\":\"a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\"}");
}

TEST(Decode, UnsignedAcceptsANonNegativeSignedValue) {
  // A document built in memory ({"id", 5} from an int) holds 5 signed; parsed text unsigned.
  EXPECT_EQ(proto::get_uint(json{{"id", 5}}, "id"), 5u);
  EXPECT_EQ(proto::get_uint(json::parse(R"({"id":5})"), "id"), 5u);
  EXPECT_THROW(proto::get_uint(json{{"id", -5}}, "id"), proto::BadMessage);
}
