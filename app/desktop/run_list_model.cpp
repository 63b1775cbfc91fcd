#include "run_list_model.h"

#include <QColor>
#include <QDateTime>
#include <QFont>
#include <QLocale>
#include <algorithm>
#include <limits>

#include "shardscope/core/device.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

bool isNumber(int column) {
  return column == RunListModel::Id || column == RunListModel::Batch || column == RunListModel::Ranks ||
         column == RunListModel::Steps || column == RunListModel::StepTime;
}

// "2026-12-04 05:43" in local time, from the store's ISO 8601 UTC.
QString localTime(const std::string& iso) {
  QDateTime t = QDateTime::fromString(qs(iso), Qt::ISODateWithMs);
  if (!t.isValid()) t = QDateTime::fromString(qs(iso), Qt::ISODate);
  return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")) : qs(iso);
}

}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunListModel::setRows(std::vector<profiler::RunRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

const profiler::RunRow* RunListModel::runAt(int row) const {
  return row >= 0 && static_cast<std::size_t>(row) < rows_.size() ? &rows_[static_cast<std::size_t>(row)] : nullptr;
}

void RunListModel::setRemoteRows(std::vector<RemoteRow> rows) {
  // Progress updates change cells, not rows: the selection stays.
  const bool same_jobs =
      std::equal(rows.begin(), rows.end(), remote_.begin(), remote_.end(),
                 [](const RemoteRow& a, const RemoteRow& b) { return a.address == b.address && a.job == b.job; });
  if (same_jobs) {
    remote_ = std::move(rows);
    if (!remote_.empty())
      emit dataChanged(index(static_cast<int>(rows_.size()), 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  remote_ = std::move(rows);
  endResetModel();
}

const RemoteRow* RunListModel::remoteAt(int row) const {
  const auto i = static_cast<std::size_t>(row) - rows_.size();
  return row >= 0 && static_cast<std::size_t>(row) >= rows_.size() && i < remote_.size() ? &remote_[i] : nullptr;
}

int RunListModel::rowOf(qint64 id) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (static_cast<qint64>(rows_[i].id) == id) return static_cast<int>(i);
  return -1;
}

int RunListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size() + remote_.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {

QString none() { return QStringLiteral("\u2014"); }

QString layoutText(const profiler::RunRow& r) {
  if (r.sharding_group_size == 0) return none();
  QString text = QStringLiteral("M=%1 \u00d7 R=%2").arg(r.sharding_group_size).arg(r.replicas);
  if (!r.layout.empty()) text += QLatin1Char(' ') + qs(r.layout);
  return text;
}

QString ranksText(const profiler::RunRow& r) {
  if (r.measured_ranks == 0) return none();
  return r.world_size == 0 ? QString::number(r.measured_ranks)
                           : QStringLiteral("%1/%2").arg(r.measured_ranks).arg(r.world_size);
}

}  // namespace

QVariant RunListModel::display(const profiler::RunRow& r, int column) const {
  switch (column) {
    case Id:
      return QString::number(static_cast<qint64>(r.id));
    case Name:
      return qs(r.label);
    case Source:
      return qs(r.kind);
    case Model:
      return r.model.empty() ? none() : qs(r.model);
    case Layout:
      return layoutText(r);
    case Batch:
      return r.batch_size_per_gpu == 0 ? none() : QLocale().toString(r.batch_size_per_gpu);
    case Device:
      return qs(core::shortDeviceName(r.device));
    case Ranks:
      return ranksText(r);
    case Status:
      return qs(std::string(core::store::toText(r.status)));
    case Created:
      return localTime(r.created_at);
    case Steps:
      return QString::number(r.steps);
    case StepTime:
      return r.step_ms ? QLocale().toString(*r.step_ms, 'f', 3) : none();
    default:
      return {};
  }
}

QVariant RunListModel::sortKey(const profiler::RunRow& r, int column) const {
  switch (column) {
    case Id:
      return static_cast<qint64>(r.id);
    case Layout:
      return static_cast<qint64>(r.sharding_group_size) * 1'000'000 + r.replicas;
    case Batch:
      return static_cast<qint64>(r.batch_size_per_gpu);
    case Ranks:
      return static_cast<qint64>(r.measured_ranks) * 1'000'000 + r.world_size;
    case Created:
      return qs(r.created_at);
    case Steps:
      return static_cast<qint64>(r.steps);
    case StepTime:
      return r.step_ms ? *r.step_ms : -1.0;
    default:
      return display(r, column);
  }
}

QVariant RunListModel::toolTip(const profiler::RunRow& r, int column) const {
  if (r.status == core::store::RunStatus::Failed && !r.error.empty()) return tr("Failed: %1").arg(qs(r.error));
  switch (column) {
    case Name:
      return tr("%1 run; double-click to rename").arg(qs(r.kind));
    case Device:
      return qs(core::describeDevice(r.device));
    case Ranks:
      return r.world_size == 0
                 ? tr("%n rank(s) measured; world size unknown", nullptr, static_cast<int>(r.measured_ranks))
                 : tr("%1 of %2 ranks measured").arg(r.measured_ranks).arg(r.world_size);
    case StepTime:
      return tr("Per measured step the slowest rank's step, median over the steps");
    default:
      return {};
  }
}

// A remote job's cells: the job id where a run's id goes (sorted above every
// run, newest job first), its progress as the status.
QVariant RunListModel::remoteData(const RemoteRow& r, int row, int column, int role) const {
  if (role == kSortRole) {
    if (column == Id) return std::numeric_limits<qint64>::max() - static_cast<qint64>(remote_.size()) + row;
    if (column == Created) return r.created;
    role = Qt::DisplayRole;
  }
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
      switch (column) {
        case Id:
          return r.job;
        case Name:
          return r.label;
        case Source:
          return r.mode;
        case Model:
          return r.model.isEmpty() ? none() : r.model;
        case Layout:
          return r.grid.isEmpty() ? none() : r.grid;
        case Device:
          return r.kind;
        case Status:
          return r.status;
        case Created:
          return localTime(r.created.toStdString());
        case Batch:
        case Ranks:
        case Steps:
        case StepTime:
          return none();
        default:
          return {};
      }
    case Qt::TextAlignmentRole: {
      const bool number = isNumber(column);
      return QVariant::fromValue(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
    }
    case Qt::ForegroundRole:
      if (column == Status && r.failed) return QColor(0xc0, 0x20, 0x20);
      if (column == Status && r.active) return QColor(0x20, 0x60, 0xc0);
      return {};
    case Qt::FontRole:
      if (column == Status && r.active) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      return r.detail.isEmpty() ? QVariant() : QVariant(r.detail);
    default:
      return {};
  }
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
  if (index.isValid() && index.column() >= 0 && index.column() < ColumnCount)
    if (const RemoteRow* remote = remoteAt(index.row()))
      return remoteData(*remote, index.row() - static_cast<int>(rows_.size()), index.column(), role);
  const profiler::RunRow* r = index.isValid() ? runAt(index.row()) : nullptr;
  if (r == nullptr || index.column() < 0 || index.column() >= ColumnCount) return {};
  switch (role) {
    case Qt::DisplayRole:
      return display(*r, index.column());
    case Qt::EditRole:
      return index.column() == Name ? qs(r->label) : display(*r, index.column());
    case kSortRole:
      return sortKey(*r, index.column());
    case Qt::TextAlignmentRole: {
      const bool number = isNumber(index.column());
      return QVariant::fromValue(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
    }
    case Qt::ForegroundRole:
      if (index.column() == Status && r->status == core::store::RunStatus::Failed) return QColor(0xc0, 0x20, 0x20);
      return {};
    case Qt::ToolTipRole:
      return toolTip(*r, index.column());
    default:
      return {};
  }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  static const char* const kTitles[ColumnCount] = {
      QT_TR_NOOP("Run"),    QT_TR_NOOP("Name"),    QT_TR_NOOP("Source"), QT_TR_NOOP("Model"),
      QT_TR_NOOP("Layout"), QT_TR_NOOP("Batch"),   QT_TR_NOOP("Device"), QT_TR_NOOP("Ranks"),
      QT_TR_NOOP("Status"), QT_TR_NOOP("Created"), QT_TR_NOOP("Steps"),  QT_TR_NOOP("Step (ms)")};
  static const char* const kTips[ColumnCount] = {
      nullptr,
      nullptr,
      QT_TR_NOOP("How the run was made: the engine (emulate, mpi, cuda) or an import (import-kineto, import-nsys, "
                 "import-nccl)"),
      nullptr,
      QT_TR_NOOP("Sharding group size M \u00d7 replicas R, and the rank layout"),
      QT_TR_NOOP("Samples per GPU per step"),
      QT_TR_NOOP("What the run ran on (hover a cell for the whole name)"),
      QT_TR_NOOP("Measured ranks / world size"),
      nullptr,
      nullptr,
      QT_TR_NOOP("Measured steps"),
      QT_TR_NOOP("The run's step time: per measured step the slowest rank's, median over the steps")};
  if (role == Qt::DisplayRole) return tr(kTitles[section]);
  if (role == Qt::ToolTipRole && kTips[section] != nullptr) return tr(kTips[section]);
  return {};
}

Qt::ItemFlags RunListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
  if (index.column() == Name && remoteAt(index.row()) == nullptr) f |= Qt::ItemIsEditable;
  return f;
}

bool RunListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !index.isValid() || index.column() != Name) return false;
  const profiler::RunRow* r = runAt(index.row());
  if (r == nullptr) return false;
  const QString label = value.toString().trimmed();
  if (label == qs(r->label)) return false;
  rows_[static_cast<std::size_t>(index.row())].label = label.toStdString();
  emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, kSortRole});
  emit renameRequested(static_cast<qint64>(r->id), label);
  return true;
}

}  // namespace shardscope::app
