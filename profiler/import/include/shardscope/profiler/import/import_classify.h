// Classification of imported trace events (kernels, NCCL collectives) into
// what the analysis reads: embedding forward/backward, communication by
// collective, dense compute, memory, other. The rules are one ordered regex
// list (defaults below, docs/import.md); a user file (shardscope.classify/1)
// prepends its own. Names repeat a lot, so results are cached per name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

enum class KernelClass : std::uint8_t {
  EmbFwd,
  EmbBwd,
  AllToAll,
  AllReduce,
  ReduceScatter,
  AllGather,
  SendRecv,
  Broadcast,
  Reduce,
  Dense,
  Memory,
  Other,
};

// "emb_fwd", "emb_bwd", "all_to_all", "all_reduce", "reduce_scatter",
// "all_gather", "send_recv", "broadcast", "reduce", "dense", "memory",
// "other". A collective's text is also its op in the store's `collectives`.
[[nodiscard]] std::string_view toText(KernelClass c);
[[nodiscard]] std::optional<KernelClass> kernelClassFromText(std::string_view text);
[[nodiscard]] bool isCollective(KernelClass c);

// A collective name as traces spell it ("all_to_all", "alltoall_base",
// "allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced",
// "broadcast", "reduce", "send", "recv", "gather", "scatter", ...) -> its
// class; nullopt when not recognised.
[[nodiscard]] std::optional<KernelClass> collectiveFromName(std::string_view name);

struct ClassifyRule {
  std::string pattern;  // ECMAScript regex, matched against the whole name
  KernelClass cls = KernelClass::Other;
};

// The built-in rules, in order (first match wins).
[[nodiscard]] const std::vector<ClassifyRule>& defaultClassifyRules();

class KernelClassifier {
 public:
  // Defaults only.
  KernelClassifier();
  // `extra` first, then the defaults. Errors name the rule's index and pattern.
  [[nodiscard]] static core::Result<KernelClassifier> withRules(const std::vector<ClassifyRule>& extra);
  // Reads a shardscope.classify/1 file: {"schema": "shardscope.classify/1",
  // "rules": [{"pattern": "...", "class": "emb_fwd"}, ...]}. Errors read
  // "<file>: /rules/2/pattern: invalid regular expression: ...".
  [[nodiscard]] static core::Result<KernelClassifier> fromFile(const std::filesystem::path& path);

  // The class of a kernel (or other GPU event) name. `collective` is the
  // trace's own collective name (Kineto "Collective name"); when it is
  // recognised it wins over the kernel name.
  [[nodiscard]] KernelClass classify(std::string_view name, std::string_view collective = {});

  [[nodiscard]] std::size_t ruleCount() const { return rules_.size(); }

 private:
  struct Compiled {
    std::regex re;
    KernelClass cls;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<Compiled> rules_;
  std::unordered_map<std::string, KernelClass, Hash, std::equal_to<>> cache_;  // looked up without a copy
};

}  // namespace shardscope::profiler
