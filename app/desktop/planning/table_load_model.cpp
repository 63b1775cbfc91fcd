#include "table_load_model.h"

#include <QBrush>
#include <QColor>

#include "shardscope/report/constraint_edits.h"

namespace shardscope::app {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

TableLoadModel::TableLoadModel(QObject* parent) : QAbstractTableModel(parent) {}

void TableLoadModel::setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  endResetModel();
}

void TableLoadModel::setConstraints(core::Constraints constraints) {
  if (constraints == constraints_) return;
  constraints_ = std::move(constraints);
  if (rowCount() > 0) emit dataChanged(index(0, Constraint), index(rowCount() - 1, Constraint));
}

int TableLoadModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !snapshot_) return 0;
  return static_cast<int>(snapshot_->tables.size());
}

int TableLoadModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString TableLoadModel::constraintText(const std::string& table) const {
  const core::TableConstraint* c = constraints_.find(table);
  if (c == nullptr) return {};
  core::Constraints only;
  only.tables.push_back(*c);
  QStringList parts;
  for (const report::ConstraintEntry& e : report::constraintEntries(only)) {
    // Without the "t3: " prefix: the row names the table.
    const std::string& text = e.text;
    const std::size_t colon = text.find(": ");
    parts << QString::fromStdString(colon == std::string::npos ? text : text.substr(colon + 2));
  }
  return parts.join(QStringLiteral("; "));
}

QVariant TableLoadModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !snapshot_) return {};
  const auto row = static_cast<std::size_t>(index.row());
  const core::TablePlacement& tp = snapshot_->grid.plan.tables[row];
  const report::TableSummary& t = snapshot_->tables[row];
  const int c = index.column();
  if (role == TableNameRole) return QString::fromStdString(tp.name);
  switch (role) {
    case Qt::DisplayRole:
      switch (c) {
        case Table:
          return QString::fromStdString(tp.name);
        case Type:
          return QString::fromLatin1(core::toString(tp.sharding_type));
        case Shards:
          return QString::number(t.shards);
        case Ranks:
          return QString::fromStdString(report::rankSpanText(t.ranks));
        case Load:
          return QString::number(t.load_ms, 'f', 3);
        case MaxRank:
          return QString::number(t.max_rank_ms, 'f', 3);
        case StateGiB:
          return QString::number(static_cast<double>(t.state_bytes) / kGiB, 'f', 2);
        case Constraint:
          return constraintText(tp.name);
        default:
          return {};
      }
    case SortRole:
      switch (c) {
        case Table:
          return QString::fromStdString(tp.name);
        case Type:
          return QString::fromLatin1(core::toString(tp.sharding_type));
        case Shards:
          return t.shards;
        case Ranks:
          return t.ranks.empty() ? -1 : static_cast<int>(t.ranks.front());
        case Load:
          return t.load_ms;
        case MaxRank:
          return t.max_rank_ms;
        case StateGiB:
          return static_cast<double>(t.state_bytes);
        case Constraint:
          return constraintText(tp.name);
        default:
          return {};
      }
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(static_cast<int>(c == Table || c == Type || c == Ranks || c == Constraint
                                                      ? Qt::AlignLeft | Qt::AlignVCenter
                                                      : Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
      if (c == Constraint) return QBrush(QColor(0x2a, 0x5d, 0xa8));
      return {};
    case Qt::ToolTipRole:
      if (c == Ranks) return tr("Group ranks holding %1").arg(QString::fromStdString(tp.name));
      return tr("Right-click to pin %1 to a rank or force/forbid a sharding type").arg(QString::fromStdString(tp.name));
    default:
      return {};
  }
}

QVariant TableLoadModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  static const char* const names[] = {QT_TR_NOOP("Table"),       QT_TR_NOOP("Sharding"),   QT_TR_NOOP("Shards"),
                                      QT_TR_NOOP("Ranks"),       QT_TR_NOOP("Load (ms)"),  QT_TR_NOOP("Max/rank (ms)"),
                                      QT_TR_NOOP("State (GiB)"), QT_TR_NOOP("Constraints")};
  static const char* const tips[] = {
      QT_TR_NOOP("Embedding table"),
      QT_TR_NOOP("How the plan shards it"),
      QT_TR_NOOP("Shards (a data-parallel table: one copy per rank)"),
      QT_TR_NOOP("Group ranks holding it"),
      QT_TR_NOOP("Its load summed over the group's ranks"),
      QT_TR_NOOP("Its load on its heaviest rank"),
      QT_TR_NOOP("Weights + optimizer state in one sharding group (one copy for data-parallel tables)"),
      QT_TR_NOOP("What the project requires of it")};
  if (role == Qt::DisplayRole) return tr(names[section]);
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  return {};
}

}  // namespace shardscope::app
