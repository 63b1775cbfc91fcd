// Sizes, durations and whole numbers as people type them on a command line
// ("6G", "512MiB", "1048576"; "250ms", "1m05s"): one parser for every
// program, so shardscope-cli and shardscope-engine accept the same text.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace shardscope::core {

// A whole decimal number in [min, max]: digits only (no sign, no spaces, no
// suffix, no fraction); nullopt for anything else or past 64 bits.
[[nodiscard]] std::optional<std::uint64_t> parseWholeNumber(std::string_view text, std::uint64_t min = 0,
                                                            std::uint64_t max = UINT64_MAX);

// Bytes: a whole number, optionally followed by B, K or KiB, M or MiB, G or
// GiB, T or TiB (powers of 1024, upper case as written): "6G", "512MiB",
// "1048576". nullopt for anything else (fractions, lower case, "MB") or past
// 64 bits. "0" is a size; callers that need a positive one check.
[[nodiscard]] std::optional<std::uint64_t> parseSize(std::string_view text);

// A duration: one or more <number><unit> parts, units h, m, s, ms, us, ns,
// each unit at most once and larger units first; numbers are decimal and
// may have a fraction ("0.4s", "250ms", "1m05s", "1h30m"). A bare number
// has no unit and is refused. Rounded to whole nanoseconds. Reads back every
// form of formatDuration's clock (time_text.h: "0.4s", "12s", "1m05s").
[[nodiscard]] std::optional<std::chrono::nanoseconds> parseDuration(std::string_view text);

}  // namespace shardscope::core
