// Kernel classification rules (docs/import.md): one ordered regex list.
#include "shardscope/profiler/import/import_classify.h"

#include <array>
#include <sstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"

namespace shardscope::profiler {

namespace {
constexpr std::array<std::pair<KernelClass, std::string_view>, 12> kNames{{
    {KernelClass::EmbFwd, "emb_fwd"},
    {KernelClass::EmbBwd, "emb_bwd"},
    {KernelClass::AllToAll, "all_to_all"},
    {KernelClass::AllReduce, "all_reduce"},
    {KernelClass::ReduceScatter, "reduce_scatter"},
    {KernelClass::AllGather, "all_gather"},
    {KernelClass::SendRecv, "send_recv"},
    {KernelClass::Broadcast, "broadcast"},
    {KernelClass::Reduce, "reduce"},
    {KernelClass::Dense, "dense"},
    {KernelClass::Memory, "memory"},
    {KernelClass::Other, "other"},
}};

}  // namespace

std::string_view toText(KernelClass c) {
  for (const auto& [k, n] : kNames)
    if (k == c) return n;
  return "other";
}

std::optional<KernelClass> kernelClassFromText(std::string_view text) {
  for (const auto& [k, n] : kNames)
    if (n == text) return k;
  return std::nullopt;
}

bool isCollective(KernelClass c) {
  return c == KernelClass::AllToAll || c == KernelClass::AllReduce || c == KernelClass::ReduceScatter ||
         c == KernelClass::AllGather || c == KernelClass::SendRecv || c == KernelClass::Broadcast ||
         c == KernelClass::Reduce;
}

std::optional<KernelClass> collectiveFromName(std::string_view name) {
  std::string n = core::asciiLower(name);
  std::string squashed;
  for (char c : n)
    if (c != '_' && c != ' ' && c != '-') squashed += c;
  if (squashed.empty()) return std::nullopt;
  if (squashed.find("alltoall") != std::string::npos) return KernelClass::AllToAll;
  if (squashed.find("allreduce") != std::string::npos) return KernelClass::AllReduce;
  if (squashed.find("reducescatter") != std::string::npos) return KernelClass::ReduceScatter;
  if (squashed.find("allgather") != std::string::npos) return KernelClass::AllGather;
  // "send_recv" is what a SendRecv kernel's name says (nsys): that kernel also
  // carries all-to-alls, so it is left to the kernel rules. PyTorch names
  // point-to-point ops "send" / "recv".
  if (squashed.find("sendrecv") != std::string::npos) return std::nullopt;
  if (squashed.starts_with("send") || squashed.starts_with("recv")) return KernelClass::SendRecv;
  // NCCL has no gather or scatter: c10d runs them as point-to-point sends and receives.
  if (squashed == "gather" || squashed == "scatter") return KernelClass::SendRecv;
  if (squashed.find("broadcast") != std::string::npos) return KernelClass::Broadcast;
  if (squashed == "reduce") return KernelClass::Reduce;
  return std::nullopt;
}

const std::vector<ClassifyRule>& defaultClassifyRules() {
  static const std::vector<ClassifyRule> rules = {
      // FBGEMM table-batched embeddings (TorchRec) and the engine's own kernels.
      {".*split_embedding_backward_codegen_.*", KernelClass::EmbBwd},
      {".*grad_indice_weights.*", KernelClass::EmbBwd},
      {".*split_embedding_codegen_forward_.*", KernelClass::EmbFwd},
      {".*split_embedding_nobag_codegen_forward_.*", KernelClass::EmbFwd},
      {".*(shardscope|pooled)_?embedding_?(bag_)?backward.*", KernelClass::EmbBwd},
      {".*(shardscope|pooled)_?embedding_?(bag_)?forward.*", KernelClass::EmbFwd},
      // NCCL: all-to-all runs as SendRecv kernels.
      {"(ncclKernel|ncclDevKernel)_?(AllToAll|SendRecv|Alltoall).*", KernelClass::AllToAll},
      {"(ncclKernel|ncclDevKernel)_?AllReduce.*", KernelClass::AllReduce},
      {"(ncclKernel|ncclDevKernel)_?ReduceScatter.*", KernelClass::ReduceScatter},
      {"(ncclKernel|ncclDevKernel)_?AllGather.*", KernelClass::AllGather},
      {"(ncclKernel|ncclDevKernel)_?(Send|Recv).*", KernelClass::SendRecv},
      {"(ncclKernel|ncclDevKernel)_?Broadcast.*", KernelClass::Broadcast},
      {"(ncclKernel|ncclDevKernel)_?Reduce.*", KernelClass::Reduce},
      // Memory.
      {"(?:Memcpy|Memset|memcpy|memset|cudaMemcpy|cudaMemset).*", KernelClass::Memory},
      // Dense compute: GEMMs and the usual libraries; ROCm's Tensile GEMMs are
      // named Cijk_<layout>_<types>_... (rocBLAS, hipBLASLt).
      {"Cijk_.*", KernelClass::Dense},
      {".*(gemm|Gemm|GEMM|cutlass|cublas|cudnn|sm80_xmma|sm90_xmma|ampere_|hopper_|volta_|turing_|flash_fwd|"
       "flash_bwd|fmha|wgrad|dgrad|matmul|conv).*",
       KernelClass::Dense},
  };
  return rules;
}

KernelClassifier::KernelClassifier() {
  for (const auto& r : defaultClassifyRules()) rules_.push_back({std::regex(r.pattern, std::regex::optimize), r.cls});
}

core::Result<KernelClassifier> KernelClassifier::withRules(const std::vector<ClassifyRule>& extra) {
  KernelClassifier k;
  std::vector<Compiled> mine;
  for (std::size_t i = 0; i < extra.size(); ++i) {
    try {
      mine.push_back({std::regex(extra[i].pattern, std::regex::optimize), extra[i].cls});
    } catch (const std::regex_error& e) {
      std::ostringstream o;
      o << "/rules/" << i << "/pattern: invalid regular expression: " << e.what() << " ('" << extra[i].pattern << "')";
      return core::Error{o.str()};
    }
  }
  mine.insert(mine.end(), std::make_move_iterator(k.rules_.begin()), std::make_move_iterator(k.rules_.end()));
  k.rules_ = std::move(mine);
  return k;
}

core::Result<KernelClassifier> KernelClassifier::fromFile(const std::filesystem::path& path) {
  const std::string file = path.string();
  // Read like every other JSON input: syntax errors with line and column, duplicate keys and numbers beyond a
  // double refused with their JSON path.
  auto parsed = core::readJsonFile(file);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return core::Error{file + ": /: expected an object"};
  if (!j.contains("schema") || !j["schema"].is_string() || j["schema"].get<std::string>() != "shardscope.classify/1")
    return core::Error{file + ": /schema: expected \"shardscope.classify/1\""};
  if (!j.contains("rules") || !j["rules"].is_array()) return core::Error{file + ": /rules: expected an array"};
  std::vector<ClassifyRule> rules;
  const auto& arr = j["rules"];
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string at = file + ": /rules/" + std::to_string(i);
    const auto& r = arr[i];
    if (!r.is_object()) return core::Error{at + ": expected an object {\"pattern\", \"class\"}"};
    if (!r.contains("pattern") || !r["pattern"].is_string() || r["pattern"].get<std::string>().empty())
      return core::Error{at + "/pattern: expected a non-empty string"};
    if (!r.contains("class") || !r["class"].is_string()) return core::Error{at + "/class: expected a string"};
    auto cls = kernelClassFromText(r["class"].get<std::string>());
    if (!cls)
      return core::Error{at +
                         "/class: expected one of emb_fwd, emb_bwd, all_to_all, all_reduce, reduce_scatter, "
                         "all_gather, send_recv, broadcast, reduce, dense, memory, other; got \"" +
                         r["class"].get<std::string>() + "\""};
    rules.push_back({r["pattern"].get<std::string>(), *cls});
  }
  auto k = withRules(rules);
  if (!k) return core::Error{file + ": " + k.error().message};
  return k;
}

KernelClass KernelClassifier::classify(std::string_view name, std::string_view collective) {
  if (!collective.empty())
    if (auto c = collectiveFromName(collective)) return *c;
  if (auto it = cache_.find(name); it != cache_.end()) return it->second;
  std::string key(name);
  KernelClass cls = KernelClass::Other;
  // libstdc++'s matcher recurses per character: a name of tens of KB would
  // overflow the stack. What identifies a kernel is at the start of its
  // name (templates and arguments follow), so only the first kMaxMatched
  // characters are matched.
  constexpr std::size_t kMaxMatched = 1024;
  const std::string_view matched = std::string_view(key).substr(0, kMaxMatched);
  for (const auto& r : rules_)
    if (std::regex_match(matched.begin(), matched.end(), r.re)) {
      cls = r.cls;
      break;
    }
  if (cache_.size() < 1'000'000) cache_.emplace(std::move(key), cls);
  return cls;
}

}  // namespace shardscope::profiler
