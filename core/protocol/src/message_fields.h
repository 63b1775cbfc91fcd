// The members protocol messages share, read with core's JsonReader under the
// protocol's stricter rules: a whole number is never given as a float or a
// bool, labels hold no control characters, job ids and words come from fixed
// forms. Private to messages.cpp and messages_job.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_reader.h"
#include "shardscope/core/result.h"

namespace shardscope::core::protocol::detail {

using core::childPath;
using core::JsonReader;
using json = nlohmann::json;

// A short form of a value for messages, as core's describe, but a string is
// quoted through quoteText (safe_text.h): a peer's bytes never reach a
// message unescaped.
[[nodiscard]] std::string describe(const json& j);

// Checks the envelope (checkEnvelope) and that the type is `type`.
[[nodiscard]] Status openMessage(const json& m, const std::string& source, std::string_view type);
// "v", "type" and, when nonzero, "id": the start of every message toJson writes.
[[nodiscard]] json messageHead(std::string_view type, std::uint64_t id);

// A request's "id": required, 1..kMaxMessageInteger. An answer's or event's:
// optional (0 when absent), 0..kMaxMessageInteger.
std::uint64_t requestId(JsonReader& r, const json& m);
std::uint64_t answerId(JsonReader& r, const json& m);

// A whole number in [min, max]: not a float, a bool or a string.
std::optional<std::uint64_t> wholeValue(JsonReader& r, const json& v, const std::string& path, std::uint64_t min,
                                        std::uint64_t max);
std::optional<std::uint64_t> whole(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                   bool required, std::uint64_t min, std::uint64_t max);
std::optional<std::int64_t> signedWhole(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                        bool required, std::int64_t min, std::int64_t max);
// Strings: any text (empty allowed), a label (<= kMaxLabelBytes, safe text:
// safe_text.h's findUnsafe), a job id (validJobId), a SHA-256 (64 lowercase
// hex digits).
std::optional<std::string> text(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                bool required);
std::optional<std::string> label(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                 bool required);
// Records a problem at `path` when `text`, a name a peer gave that others are
// shown, is not safe text (findUnsafe); `what` names it ("a label").
bool checkSafeName(JsonReader& r, std::string_view text, const std::string& path, std::string_view what);
std::optional<std::string> jobId(JsonReader& r, const json& obj, const std::string& path, std::string_view key);
std::optional<std::string> sha256(JsonReader& r, const json& obj, const std::string& path, std::string_view key);
// One of `words`: its index.
std::optional<std::size_t> wordValue(JsonReader& r, const json& v, const std::string& path,
                                     std::span<const std::string_view> words);
std::optional<std::size_t> word(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                bool required, std::span<const std::string_view> words);
// An array member (nullptr, and a problem when required, if absent or not an array).
const json* array(JsonReader& r, const json& obj, const std::string& path, std::string_view key, bool required);
// An object member (nullptr, and a problem when required, if absent or not an object).
const json* object(JsonReader& r, const json& obj, const std::string& path, std::string_view key, bool required);

// An error of a reader run on a part of a message (a project, a plan) as if
// read at `prefix`: its json_path and the paths its message names start there.
[[nodiscard]] Error prefixed(Error e, const std::string& source, const std::string& prefix);

}  // namespace shardscope::core::protocol::detail
