#include "table_list_model.h"

#include <QAbstractProxyModel>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "shardscope/core/model_csv.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

constexpr core::DType kDTypes[] = {core::DType::FP32, core::DType::FP16, core::DType::BF16, core::DType::INT8};

QString qs(const std::string& s) { return QString::fromStdString(s); }

// A whole, non-negative count from a number or from text people type.
std::optional<std::uint64_t> countOf(const QVariant& value) {
  switch (value.typeId()) {
    case QMetaType::QString:
      return report::parseCount(value.toString().toStdString());
    case QMetaType::ULongLong:
    case QMetaType::UInt:
      return value.toULongLong();
    case QMetaType::LongLong:
    case QMetaType::Int:
      if (value.toLongLong() < 0) return std::nullopt;
      return static_cast<std::uint64_t>(value.toLongLong());
    case QMetaType::Double: {
      const double d = value.toDouble();
      if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d > 9007199254740992.0) return std::nullopt;
      return static_cast<std::uint64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

QString described(const QVariant& value) {
  const QString s = value.toString();
  return value.typeId() == QMetaType::QString ? QLatin1Char('"') + s + QLatin1Char('"') : s;
}

// The TableListModel under `index` (through any proxies) and the index there.
std::pair<const TableListModel*, QModelIndex> sourceOf(const QModelIndex& index) {
  QModelIndex i = index;
  const QAbstractItemModel* m = index.model();
  while (const auto* proxy = qobject_cast<const QAbstractProxyModel*>(m)) {
    i = proxy->mapToSource(i);
    m = proxy->sourceModel();
  }
  return {qobject_cast<const TableListModel*>(m), i};
}

}  // namespace

TableListModel::TableListModel(QObject* parent) : QAbstractTableModel(parent) {}

void TableListModel::setTables(std::vector<core::TableSpec> tables) {
  const std::size_t old_n = tables_.size();
  const std::size_t new_n = tables.size();
  const std::size_t common = std::min(old_n, new_n);
  std::size_t prefix = 0;
  while (prefix < common && tables_[prefix] == tables[prefix]) ++prefix;
  if (old_n == new_n && prefix == old_n) return;  // nothing changed
  std::size_t suffix = 0;
  while (suffix < common - prefix && tables_[old_n - 1 - suffix] == tables[new_n - 1 - suffix]) ++suffix;

  const int first = static_cast<int>(prefix);
  if (old_n == new_n) {
    tables_ = std::move(tables);
    emit dataChanged(index(first, 0), index(static_cast<int>(old_n - 1 - suffix), ColumnCount - 1));
  } else if (new_n > old_n && prefix + suffix == old_n) {
    beginInsertRows({}, first, first + static_cast<int>(new_n - old_n) - 1);
    tables_ = std::move(tables);
    endInsertRows();
  } else if (new_n < old_n && prefix + suffix == new_n) {
    beginRemoveRows({}, first, first + static_cast<int>(old_n - new_n) - 1);
    tables_ = std::move(tables);
    endRemoveRows();
  } else {
    beginResetModel();
    tables_ = std::move(tables);
    endResetModel();
  }
}

int TableListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(tables_.size());
}

int TableListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags TableListModel::flags(const QModelIndex& index) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid)) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemNeverHasChildren;
  if (index.column() != SizeGiB) f |= Qt::ItemIsEditable;
  return f;
}

QVariant TableListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid)) return {};
  const core::TableSpec& t = tables_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return displayText(t, index.column());
    case Qt::EditRole:
      return editValue(t, index.column());
    case SortRole:
      return sortValue(t, index.column());
    case Qt::TextAlignmentRole:
      switch (index.column()) {
        case Rows:
        case Dim:
        case SizeGiB:
          return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        default:
          return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
      }
    case Qt::ToolTipRole:
      switch (index.column()) {
        case Name:
          return qs(t.name);
        case Rows:
          return tr("%1 rows").arg(qs(report::formatCount(t.rows)));
        case Pooling:
          if (t.pooling.kind == core::PoolingKind::Uniform) {
            return tr("Uniform: %1 to %2 ids per sample, %3 on average")
                .arg(qs(report::formatShort(t.pooling.mean - t.pooling.spread)),
                     qs(report::formatShort(t.pooling.mean + t.pooling.spread)),
                     qs(report::formatShort(t.pooling.mean)));
          }
          return tr("%1 ids per sample").arg(qs(report::formatShort(t.pooling.mean)));
        case Access:
          return t.access.kind == core::AccessKind::Histogram
                     ? tr("Measured: the share of ids per 1/%1 of the rows, from an access file or a model's histogram "
                          "(in CSV: %2)")
                           .arg(t.access.histogram.size())
                           .arg(qs(core::accessToText(t.access)))
                     : tr("Assumed: %1 (in CSV: %2); attach a measured access file (File \u203a Attach Access "
                          "File\u2026) to price it from what a trainer looked up")
                           .arg(qs(report::accessText(t.access)), qs(core::accessToText(t.access)));
        case SizeGiB:
          return tr("%1 bytes of weights (%2)")
              .arg(qs(report::formatCount(t.weightBytes())), qs(core::formatBytes(t.weightBytes())));
        default:
          return {};
      }
    default:
      return {};
  }
}

QVariant TableListModel::displayText(const core::TableSpec& t, int column) const {
  switch (column) {
    case Name:
      return qs(t.name);
    case Rows:
      return qs(report::formatCount(t.rows));
    case Dim:
      return QString::number(t.dim);
    case DType:
      return QString::fromLatin1(core::toString(t.dtype));
    case Pooling:
      return qs(report::poolingText(t.pooling));
    case Access:
      return qs(report::accessText(t.access));
    case SizeGiB:
      return qs(report::formatGibibytes(t.weightBytes()));
    default:
      return {};
  }
}

QVariant TableListModel::editValue(const core::TableSpec& t, int column) const {
  switch (column) {
    case Name:
      return qs(t.name);
    case Rows:
      return QVariant::fromValue<qulonglong>(t.rows);
    case Dim:
      return QVariant::fromValue<uint>(t.dim);
    case DType:
      return QString::fromLatin1(core::toString(t.dtype));
    case Pooling:
      return qs(report::poolingEditText(t.pooling));
    case Access:
      // Histograms have no short form; their exact shares are the text.
      return qs(t.access.kind == core::AccessKind::Histogram ? core::accessToText(t.access)
                                                             : report::accessText(t.access));
    case SizeGiB:
      return std::ldexp(static_cast<double>(t.weightBytes()), -30);
    default:
      return {};
  }
}

QVariant TableListModel::sortValue(const core::TableSpec& t, int column) const {
  switch (column) {
    case Rows:
      return QVariant::fromValue<qulonglong>(t.rows);
    case Dim:
      return QVariant::fromValue<uint>(t.dim);
    case DType:
      return core::dtypeBytes(t.dtype);
    case Pooling:
      return t.pooling.mean;
    case Access:
      // Uniform first, then by skew; enough to group kinds together.
      switch (t.access.kind) {
        case core::AccessKind::Uniform:
          return 0.0;
        case core::AccessKind::Zipf:
          return 1.0 + t.access.alpha / 100.0;
        case core::AccessKind::HotSet:
          return 2.0 + t.access.hot_probability / 10.0;
        case core::AccessKind::Histogram:
          return 3.0;
      }
      return 0.0;
    case SizeGiB:
      return QVariant::fromValue<qulonglong>(t.weightBytes());
    default:
      return displayText(t, column);
  }
}

QVariant TableListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Name:
        return tr("Name");
      case Rows:
        return tr("Rows");
      case Dim:
        return tr("Dim");
      case DType:
        return tr("DType");
      case Pooling:
        return tr("Pooling");
      case Access:
        return tr("Access");
      case SizeGiB:
        return tr("Size (GiB)");
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Name:
        return tr("Table name, unique in the model");
      case Rows:
        return tr("Rows (ids) of the table: type 40000000, 40,000,000, 4e7 or 40M");
      case Dim:
        return tr("Embedding width, a positive multiple of 4");
      case DType:
        return tr("Weight type: fp32 (4 bytes), fp16 or bf16 (2), int8 (1)");
      case Pooling:
        return tr("Ids per sample for this table (multi-hot size): \"3\", or \"20 \u00b1 5\" for uniform");
      case Access:
        return tr(
            "Which rows the ids hit: \"uniform\", \"zipf 1.05\", \"hot 10% \u2192 90%\" (10% of the rows get "
            "90% of the ids)");
      case SizeGiB:
        return tr("Weight bytes (rows \u00d7 dim \u00d7 dtype size) in GiB, 1 GiB = 2\u00b3\u2070 bytes; computed");
      default:
        return {};
    }
  }
  return {};
}

QString TableListModel::columnName(int column) {
  switch (column) {
    case Name:
      return tr("name");
    case Rows:
      return tr("rows");
    case Dim:
      return tr("dim");
    case DType:
      return tr("dtype");
    case Pooling:
      return tr("pooling");
    case Access:
      return tr("access");
    case SizeGiB:
      return tr("size");
    default:
      return {};
  }
}

core::Result<core::TableSpec> TableListModel::editedTable(int row, int column, const QVariant& value) const {
  if (row < 0 || row >= rowCount()) return core::Error{tr("No table at row %1").arg(row).toStdString()};
  core::TableSpec t = tables_[static_cast<std::size_t>(row)];
  const QString what = headerData(column, Qt::Horizontal).toString();
  const auto fail = [&](const QString& why) {
    return core::Error{tr("%1 of %2: %3").arg(what, qs(t.name), why).toStdString()};
  };
  switch (column) {
    case Name: {
      const QString name = value.toString().trimmed();
      if (name.isEmpty()) return fail(tr("a table needs a name"));
      const std::string n = name.toStdString();
      for (std::size_t i = 0; i < tables_.size(); ++i) {
        if (static_cast<int>(i) != row && tables_[i].name == n) {
          return fail(tr("another table (row %1) is already named \"%2\"").arg(i + 1).arg(name));
        }
      }
      t.name = n;
      break;
    }
    case Rows: {
      const std::optional<std::uint64_t> n = countOf(value);
      if (!n)
        return fail(tr("expected a whole number of rows such as 40000000, 40,000,000, 4e7 or 40M, got %1")
                        .arg(described(value)));
      t.rows = *n;
      break;
    }
    case Dim: {
      const std::optional<std::uint64_t> n = countOf(value);
      if (!n || *n > UINT32_MAX) return fail(tr("expected a positive multiple of 4, got %1").arg(described(value)));
      t.dim = static_cast<std::uint32_t>(*n);
      break;
    }
    case DType: {
      bool found = false;
      if (value.typeId() == QMetaType::Int && value.toInt() >= 0 && value.toInt() < 4) {
        t.dtype = kDTypes[value.toInt()];
        found = true;
      }
      for (core::DType d : kDTypes) {
        if (!found && value.toString().trimmed().compare(QLatin1String(core::toString(d)), Qt::CaseInsensitive) == 0) {
          t.dtype = d;
          found = true;
        }
      }
      if (!found) return fail(tr("expected fp32, fp16, bf16 or int8, got %1").arg(described(value)));
      break;
    }
    case Pooling: {
      std::optional<core::PoolingSpec> p;
      if (value.typeId() == QMetaType::QString) {
        p = report::parsePoolingText(value.toString().toStdString(), t.pooling);
      } else if (value.canConvert<double>()) {
        p = t.pooling;
        p->mean = value.toDouble();
      }
      if (!p) {
        return fail(tr("expected ids per sample such as 3 or 2.5, or \"20 \u00b1 5\" for uniform, got %1")
                        .arg(described(value)));
      }
      t.pooling = *p;
      break;
    }
    case Access: {
      core::Result<core::AccessSpec> a = core::accessFromText(value.toString().toStdString());
      if (!a) return fail(qs(a.error().message));
      t.access = std::move(a).value();
      break;
    }
    default:
      return fail(tr("computed from rows, dim and dtype; it cannot be edited"));
  }
  core::TableCheck check = core::checkTable(t);
  if (!check.ok()) {
    QStringList why;
    for (const core::TableFieldProblem& p : check.problems) why << qs(p.message);
    return fail(why.join(QStringLiteral("; ")));
  }
  return std::move(check.table);
}

bool TableListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole) return false;
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid)) return false;
  const int row = index.row();
  core::TableSpec& t = tables_[static_cast<std::size_t>(row)];
  // The text an editor opens with may be rounded ("hot 12.3457% → 90%"):
  // committing it unchanged would change the value, so it is no edit.
  if (value.typeId() == QMetaType::QString && value.toString() == editValue(t, index.column()).toString()) {
    last_error_.clear();
    return true;
  }
  core::Result<core::TableSpec> edited = editedTable(row, index.column(), value);
  if (!edited) {
    last_error_ = qs(edited.error().message);
    emit editRejected(last_error_);
    return false;
  }
  last_error_.clear();
  if (*edited == t) return true;
  t = std::move(edited).value();
  emit dataChanged(this->index(row, 0), this->index(row, ColumnCount - 1));
  emit tableEdited(row, index.column());
  return true;
}

// ---------------------------------------------------------------- delegate

namespace {

// Frames an editor in red with the reason as its tooltip while its value
// would be rejected.
void showVerdict(QWidget* editor, const QString& problem) {
  if (problem.isEmpty()) {
    editor->setStyleSheet({});
    editor->setToolTip({});
    QToolTip::hideText();
    return;
  }
  editor->setStyleSheet(QStringLiteral("border: 1px solid #c0392b;"));
  editor->setToolTip(problem);
  QToolTip::showText(editor->mapToGlobal(QPoint(0, editor->height())), problem, editor);
}

QString problemWith(const QPersistentModelIndex& index, const QVariant& value) {
  if (!index.isValid()) return {};
  const auto [model, source] = sourceOf(index);
  if (model == nullptr) return {};
  core::Result<core::TableSpec> t = model->editedTable(source.row(), source.column(), value);
  return t ? QString() : QString::fromStdString(t.error().message);
}

}  // namespace

TableItemDelegate::TableItemDelegate(QObject* parent) : QStyledItemDelegate(parent) {}

QWidget* TableItemDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                                         const QModelIndex& index) const {
  const QPersistentModelIndex at(index);
  switch (index.column()) {
    case TableListModel::Dim: {
      auto* spin = new QSpinBox(parent);
      spin->setRange(1, 65536);
      spin->setSingleStep(4);
      spin->setFrame(false);
      connect(spin, &QSpinBox::valueChanged, spin, [spin, at](int v) { showVerdict(spin, problemWith(at, v)); });
      return spin;
    }
    case TableListModel::DType: {
      auto* combo = new QComboBox(parent);
      for (core::DType d : kDTypes) {
        const QString name = QString::fromLatin1(core::toString(d));
        combo->addItem(tr("%1 (%2 B)").arg(name).arg(core::dtypeBytes(d)), name);
      }
      return combo;
    }
    case TableListModel::Name:
    case TableListModel::Rows:
    case TableListModel::Pooling:
    case TableListModel::Access: {
      auto* edit = new QLineEdit(parent);
      edit->setFrame(false);
      if (index.column() == TableListModel::Rows) edit->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (index.column() == TableListModel::Access) edit->setPlaceholderText(tr("uniform, zipf 1.05, hot 10% 90%"));
      connect(edit, &QLineEdit::textEdited, edit,
              [edit, at](const QString& text) { showVerdict(edit, problemWith(at, text)); });
      return edit;
    }
    default:
      return QStyledItemDelegate::createEditor(parent, option, index);
  }
}

void TableItemDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  const QVariant value = index.data(Qt::EditRole);
  if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
    spin->setValue(value.toInt());
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    combo->setCurrentIndex(std::max(0, combo->findData(value.toString())));
  } else if (auto* edit = qobject_cast<QLineEdit*>(editor)) {
    // Rows in digit groups: readable while typing, and read back as typed.
    edit->setText(index.column() == TableListModel::Rows ? qs(report::formatCount(value.toULongLong()))
                                                         : value.toString());
  } else {
    QStyledItemDelegate::setEditorData(editor, index);
  }
}

void TableItemDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const {
  QToolTip::hideText();
  if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
    spin->interpretText();
    model->setData(index, spin->value(), Qt::EditRole);
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    model->setData(index, combo->currentData().toString(), Qt::EditRole);
  } else if (auto* edit = qobject_cast<QLineEdit*>(editor)) {
    // Committing the text it was opened with changes nothing (it may be rounded).
    if (index.column() == TableListModel::Rows &&
        edit->text() == qs(report::formatCount(index.data(Qt::EditRole).toULongLong())))
      return;
    model->setData(index, edit->text(), Qt::EditRole);
  } else {
    QStyledItemDelegate::setModelData(editor, model, index);
  }
}

}  // namespace shardscope::app
