// Text a peer chose, made safe to show: in an error message the agent sends
// back, in a log line, in a label other clients list. Safe text is valid
// UTF-8 with no control character (C0, DEL, C1) and no bidirectional mark,
// embedding, override or isolate (U+200E/F, U+061C, U+202A..U+202E,
// U+2066..U+2069), so it neither breaks a JSON encoder nor reorders or
// forges what a terminal or a table shows. Plain C++ (no Qt).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace shardscope::core::protocol {

// Why `text` is not safe: the byte offset of the first offending byte or
// code point and what it is ("byte 0xFF, not UTF-8", "U+202E, a
// bidirectional override", "control character U+0009").
struct UnsafeText {
  std::size_t offset = 0;
  std::string what;
};
[[nodiscard]] std::optional<UnsafeText> findUnsafe(std::string_view text);

// Peer text quoted for a message or a log line: every byte that is not valid
// UTF-8 and every unsafe code point escaped (\xNN below U+0100, \u{NNNN}
// above), a backslash doubled so an escape cannot be forged, cut after about
// `max_bytes` (an ellipsis marks the cut, never inside a code point).
[[nodiscard]] std::string quoteText(std::string_view text, std::size_t max_bytes = 200);

// A message made here that may quote peer text somewhere: what quoteText
// escapes is escaped the same way, but backslashes are left as they are (so
// text quoted once is unchanged) and, with `keep_newlines`, line breaks stay
// (a message of several problems, one per line).
[[nodiscard]] std::string safeText(std::string_view text, bool keep_newlines = true,
                                   std::size_t max_bytes = std::numeric_limits<std::size_t>::max());

}  // namespace shardscope::core::protocol
