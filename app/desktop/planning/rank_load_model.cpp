#include "rank_load_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace shardscope::app {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// "5, 69, 133, … (64 replicas)": the global ranks that hold the same shards.
QString globalRanksText(const std::vector<std::uint32_t>& ranks) {
  QStringList parts;
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) parts << QString::number(ranks[i]);
  QString text = parts.join(QStringLiteral(", "));
  if (shown < ranks.size()) text += QStringLiteral(", \u2026 (%1 replicas)").arg(ranks.size());
  return text;
}

}  // namespace

RankLoadModel::RankLoadModel(QObject* parent) : QAbstractTableModel(parent) {}

void RankLoadModel::setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  endResetModel();
}

int RankLoadModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !snapshot_) return 0;
  return static_cast<int>(snapshot_->grid.ranks.size());
}

int RankLoadModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RankLoadModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !snapshot_) return {};
  const auto row = static_cast<std::size_t>(index.row());
  const planner::RankResult& r = snapshot_->grid.ranks[row];
  const bool critical = r.group_rank == snapshot_->grid.critical_rank;
  const std::uint64_t embedding = r.state_bytes + r.served_buffer_bytes;
  const bool over = embedding > r.capacity_bytes;
  const auto& replicas = snapshot_->grid.plan.replica_groups;
  static const std::vector<std::uint32_t> kNone;
  const std::vector<std::uint32_t>& global = row < replicas.size() ? replicas[row] : kNone;
  const double numbers[] = {static_cast<double>(r.group_rank),
                            global.empty() ? 0.0 : static_cast<double>(global.front()),
                            r.fwd_ms,
                            r.bwd_ms,
                            r.served_comm_ms,
                            r.sync_ms,
                            r.load_ms,
                            static_cast<double>(r.memory_bytes) / kGiB,
                            static_cast<double>(embedding) / kGiB,
                            static_cast<double>(r.capacity_bytes) / kGiB,
                            static_cast<double>(r.shards)};
  const int c = index.column();
  switch (role) {
    case Qt::DisplayRole:
      switch (c) {
        case GroupRank:
          return QString::number(r.group_rank);
        case GlobalRanks:
          return globalRanksText(global);
        case Shards:
          return QString::number(r.shards);
        case Memory:
        case Embedding:
        case Usable:
          return QString::number(numbers[c], 'f', 2);
        default:
          return QString::number(numbers[c], 'f', 3);
      }
    case SortRole:
      return numbers[c];
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(
          static_cast<int>(c == GlobalRanks ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
      if (over && (c == Embedding || c == Usable)) return QBrush(QColor(0xb0, 0x30, 0x30));
      if (critical) return QBrush(QColor(0xb0, 0x30, 0x30));
      return {};
    case Qt::FontRole:
      if (critical) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    case Qt::ToolTipRole:
      if (c == GlobalRanks) {
        QStringList all;
        for (std::uint32_t g : global) all << QString::number(g);
        return tr("Global ranks holding group rank %1's shards (one per replica): %2")
            .arg(r.group_rank)
            .arg(all.join(QStringLiteral(", ")));
      }
      if (critical) return tr("The slowest rank: it sets the step time");
      if (over && (c == Embedding || c == Usable))
        return tr("Embedding state and served buffers exceed the usable memory");
      return {};
    default:
      return {};
  }
}

QVariant RankLoadModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  // Two lines each: the figures are narrow, so a 1280-pixel window shows every column up to Sync and Load.
  static const char* const names[] = {
      QT_TR_NOOP("Group\nrank"), QT_TR_NOOP("Global\nranks"), QT_TR_NOOP("Fwd\n(ms)"),  QT_TR_NOOP("Bwd\n(ms)"),
      QT_TR_NOOP("Comm\n(ms)"),  QT_TR_NOOP("Sync\n(ms)"),    QT_TR_NOOP("Load\n(ms)"), QT_TR_NOOP("Mem\n(GiB)"),
      QT_TR_NOOP("Emb.\n(GiB)"), QT_TR_NOOP("Usable\n(GiB)"), QT_TR_NOOP("Shards")};
  static const char* const tips[] = {
      "Rank inside the sharding group (0..M-1)",
      "The global ranks that play this group rank in each replica",
      "Embedding forward of the shards it holds",
      "Embedding backward + fused optimizer update of its shards",
      "All-to-all bytes it serves for its shards",
      "Replica weight + optimizer sync of its state (amortised over the sync interval)",
      "What the partitioner balances: fwd + bwd + served comm (+ the sync share with the step-time objective)",
      "Memory per GPU: embedding state, all-to-all buffers, dense model",
      "Embedding state + the all-to-all buffers of the shards it serves",
      "Usable for embedding state and served buffers (HBM less reserve, own buffers, dense; rank caps)",
      "Shards it holds (a data-parallel table counts once per rank)"};
  if (role == Qt::DisplayRole) return tr(names[section]);
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  return {};
}

}  // namespace shardscope::app
