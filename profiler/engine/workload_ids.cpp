// The replay file: recorded ids per table, little-endian binary so that a
// multi-GB trace loads without parsing. Layout in docs/formats/workload-ids.md.
#include <cstring>
#include <fstream>

#include "shardscope/profiler/engine/workload.h"

namespace shardscope::profiler {

namespace {

constexpr char kMagic[8] = {'S', 'S', 'W', 'K', 'I', 'D', 'S', '\0'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8;

core::Error fail(const std::string& path, std::uint64_t offset, const std::string& what) {
  std::string m = path;
  m += ": offset ";
  m += std::to_string(offset);
  m += ": ";
  m += what;
  return core::Error{m};
}

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

class Reader {
 public:
  Reader(const std::string& path, const std::string& data) : path_(path), data_(data) {}
  [[nodiscard]] std::uint64_t offset() const { return pos_; }
  [[nodiscard]] std::uint64_t left() const { return data_.size() - pos_; }
  // Fails (truncated) unless `bytes` more bytes are there.
  [[nodiscard]] bool need(std::uint64_t bytes, const std::string& what, core::Error& err) const {
    if (left() >= bytes) return true;
    std::string m = "expected ";
    m += what;
    m += " (";
    m += std::to_string(bytes);
    m += " bytes), file is truncated: ";
    m += std::to_string(left());
    m += " bytes left";
    err = fail(path_, pos_, m);
    return false;
  }
  // Same for `count` items of `size` bytes, without overflowing count * size.
  [[nodiscard]] bool needItems(std::uint64_t count, std::uint64_t size, const std::string& what,
                               core::Error& err) const {
    if (count <= left() / size) return true;
    std::string m = "expected ";
    m += what;
    m += " (";
    m += std::to_string(count);
    m += " x ";
    m += std::to_string(size);
    m += " bytes), file is truncated: ";
    m += std::to_string(left());
    m += " bytes left";
    err = fail(path_, pos_, m);
    return false;
  }
  std::uint64_t get(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= std::uint64_t{static_cast<unsigned char>(data_[pos_ + static_cast<std::size_t>(i)])} << (8 * i);
    pos_ += static_cast<std::uint64_t>(bytes);
    return v;
  }

 private:
  const std::string& path_;
  const std::string& data_;
  std::uint64_t pos_ = 0;
};

std::string tableName(std::size_t t, const core::ModelSpec& model) {
  std::string s = "table ";
  s += std::to_string(t);
  if (t < model.tables.size()) {
    s += " (";
    s += model.tables[t].name;
    s += ")";
  }
  return s;
}

}  // namespace

core::Status writeIdTrace(const std::string& path, const IdTrace& trace) {
  if (trace.rows.size() != trace.tables.size())
    return fail(path, 0, "nothing written: trace has a rows entry per table");
  std::string out;
  out.append(kMagic, sizeof kMagic);
  put(out, kVersion, 4);
  put(out, trace.tables.size(), 4);
  put(out, trace.samples, 8);
  for (std::size_t t = 0; t < trace.tables.size(); ++t) {
    const Batch& b = trace.tables[t];
    std::uint64_t sum = 0;
    for (std::uint32_t l : b.lengths) sum += l;
    if (b.lengths.size() != trace.samples || sum != b.ids.size()) {
      std::string m = "nothing written: table ";
      m += std::to_string(t);
      m += " needs one length per sample and lengths summing to its id count";
      return fail(path, out.size(), m);
    }
    put(out, trace.rows[t], 8);
    put(out, b.ids.size(), 8);
    for (std::uint32_t l : b.lengths) put(out, l, 4);
    for (std::uint64_t id : b.ids) put(out, id, 8);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return fail(path, 0, "expected a writable file");
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) return fail(path, 0, "write failed");
  return core::Ok{};
}

core::Result<IdTrace> readIdTrace(const std::string& path, const core::ModelSpec& model) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return fail(path, 0, "expected a readable file");
  const std::streamoff size = f.tellg();
  std::string data(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  f.seekg(0);
  if (size < 0 || !f.read(data.data(), static_cast<std::streamsize>(data.size())))
    return fail(path, 0, "expected a readable file");
  Reader r(path, data);
  core::Error err;
  if (!r.need(kHeaderBytes, "a header (magic, version, table count, sample count)", err)) return err;
  if (std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    return fail(path, 0, "expected magic \"SSWKIDS\\0\" (a ShardScope workload id file)");
  r.get(8);
  const std::uint64_t version = r.get(4);
  if (version != kVersion) {
    std::string m = "expected version 1, got ";
    m += std::to_string(version);
    return fail(path, 8, m);
  }
  const std::uint64_t tables = r.get(4);
  if (tables != model.tables.size()) {
    std::string m = "expected ";
    m += std::to_string(model.tables.size());
    m += " tables (the model's), got ";
    m += std::to_string(tables);
    return fail(path, 12, m);
  }
  IdTrace trace;
  trace.samples = r.get(8);
  for (std::size_t t = 0; t < tables; ++t) {
    const std::string name = tableName(t, model);
    if (!r.need(16, name + ": rows and id count", err)) return err;
    const std::uint64_t rows_at = r.offset();
    const std::uint64_t rows = r.get(8);
    if (rows != model.tables[t].rows) {
      std::string m = name;
      m += ": expected ";
      m += std::to_string(model.tables[t].rows);
      m += " rows (the model's), got ";
      m += std::to_string(rows);
      return fail(path, rows_at, m);
    }
    const std::uint64_t count = r.get(8);
    // Check sizes before allocating, so a corrupt count cannot ask for terabytes.
    if (!r.needItems(trace.samples, 4, name + ": one 32-bit length per sample", err)) return err;
    Batch b;
    b.lengths.resize(trace.samples);
    std::uint64_t sum = 0;
    for (auto& l : b.lengths) sum += l = static_cast<std::uint32_t>(r.get(4));
    if (sum != count) {
      std::string m = name;
      m += ": expected lengths summing to the id count ";
      m += std::to_string(count);
      m += ", got ";
      m += std::to_string(sum);
      return fail(path, r.offset(), m);
    }
    if (!r.needItems(count, 8, name + ": its 64-bit ids", err)) return err;
    b.ids.resize(count);
    for (auto& id : b.ids) {
      const std::uint64_t at = r.offset();
      id = r.get(8);
      if (id >= rows) {
        std::string m = name;
        m += ": expected an id < ";
        m += std::to_string(rows);
        m += ", got ";
        m += std::to_string(id);
        return fail(path, at, m);
      }
    }
    trace.rows.push_back(rows);
    trace.tables.push_back(std::move(b));
  }
  if (r.left() != 0) {
    std::string m = "expected end of file, got ";
    m += std::to_string(r.left());
    m += " more bytes";
    return fail(path, r.offset(), m);
  }
  return trace;
}

}  // namespace shardscope::profiler
