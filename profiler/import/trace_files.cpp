#include "shardscope/profiler/import/trace_files.h"

#include <algorithm>
#include <filesystem>

namespace shardscope::profiler {

namespace fs = std::filesystem;

core::Result<std::vector<std::string>> expandTraceFolders(const std::vector<std::string>& inputs, int max_depth,
                                                          std::initializer_list<std::string_view> suffixes) {
  const auto matches = [&suffixes](const std::string& name) {
    return std::any_of(suffixes.begin(), suffixes.end(), [&name](std::string_view s) { return name.ends_with(s); });
  };
  std::vector<std::string> out;
  for (const auto& a : inputs) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(a, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() >= max_depth) it.disable_recursion_pending();
      std::error_code fec;
      if (it->is_regular_file(fec) && matches(it->path().filename().string())) found.push_back(it->path().string());
    }
    if (ec) return core::Error{a + ": cannot list the folder (" + ec.message() + ")", core::ErrorKind::InvalidInput, a};
    if (found.empty()) {
      std::string names;
      for (std::string_view s : suffixes) names += (names.empty() ? "*" : " or *") + std::string(s);
      return core::Error{a + ": no " + names + " files in the folder or its subfolders (down to " +
                             std::to_string(max_depth) + " levels; --max-depth)",
                         core::ErrorKind::InvalidInput, a};
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace shardscope::profiler
