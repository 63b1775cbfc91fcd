#include "table_list_model.h"

#include "display_format.h"

namespace shardscope::app {

TableListModel::TableListModel(QObject* parent) : QAbstractTableModel(parent) {}

void TableListModel::setTables(std::vector<core::TableSpec> tables) {
  beginResetModel();
  tables_ = std::move(tables);
  endResetModel();
}

int TableListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(tables_.size());
}

int TableListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant TableListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const core::TableSpec& t = tables_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return displayText(t, index.column());
    case SortRole:
      return sortValue(t, index.column());
    case Qt::TextAlignmentRole:
      switch (index.column()) {
        case Rows:
        case Dim:
        case SizeGB:
          return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        default:
          return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
      }
    case Qt::ToolTipRole:
      if (index.column() == SizeGB) {
        return tr("%1 bytes").arg(QString::fromStdString(formatCount(t.weightBytes())));
      }
      return {};
    default:
      return {};
  }
}

QVariant TableListModel::displayText(const core::TableSpec& t, int column) const {
  switch (column) {
    case Name: return QString::fromStdString(t.name);
    case Rows: return QString::fromStdString(formatCount(t.rows));
    case Dim: return QString::number(t.dim);
    case DType: return QString::fromLatin1(core::toString(t.dtype));
    case Pooling: return QString::fromStdString(poolingText(t.pooling));
    case Access: return QString::fromStdString(accessText(t.access));
    case SizeGB: return QString::fromStdString(formatGigabytes(t.weightBytes()));
    default: return {};
  }
}

QVariant TableListModel::sortValue(const core::TableSpec& t, int column) const {
  switch (column) {
    case Rows: return QVariant::fromValue<qulonglong>(t.rows);
    case Dim: return QVariant::fromValue<uint>(t.dim);
    case Pooling: return t.pooling.mean;
    case SizeGB: return QVariant::fromValue<qulonglong>(t.weightBytes());
    default: return displayText(t, column);
  }
}

QVariant TableListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Name: return tr("Name");
      case Rows: return tr("Rows");
      case Dim: return tr("Dim");
      case DType: return tr("DType");
      case Pooling: return tr("Pooling");
      case Access: return tr("Access");
      case SizeGB: return tr("Size (GB)");
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Pooling: return tr("Ids per sample for this table (multi-hot size)");
      case Access: return tr("Which rows the ids hit");
      case SizeGB: return tr("Weight bytes (rows \u00d7 dim \u00d7 dtype size), 1 GB = 10\u2079 bytes");
      default: return {};
    }
  }
  return {};
}

}  // namespace shardscope::app
