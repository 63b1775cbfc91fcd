#include "model_page.h"

#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelection>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "project_document.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/model_csv.h"
#include "shardscope/report/display_format.h"
#include "shardscope/report/model_tables.h"
#include "table_list_model.h"
#include "table_size_chart.h"

namespace shardscope::app {

namespace {

constexpr core::Optimizer kOptimizers[] = {core::Optimizer::SGD, core::Optimizer::RowWiseAdagrad,
                                           core::Optimizer::Adam};
constexpr std::uint64_t kNewTableRows = 1'000'000;
constexpr int kMaxNameColumnWidth = 280;

QString qs(const std::string& s) { return QString::fromStdString(s); }
// "1 table", "1,000 tables".
QString tablesText(std::size_t n) {
  return n == 1 ? ModelPage::tr("1 table") : ModelPage::tr("%1 tables").arg(qs(report::formatCount(n)));
}
// 3078299000000 -> "2,866.89 GiB".
QString gib(std::uint64_t bytes) { return qs(report::formatGibibytes(bytes)) + QStringLiteral(" GiB"); }
// Whole numbers in digit groups ("20,231"), others as they are ("2.5").
QString number(double v) {
  if (v >= 0 && v < 1e15 && v == std::floor(v)) return qs(report::formatCount(static_cast<std::uint64_t>(v)));
  return qs(report::formatShort(v));
}

QGroupBox* groupAround(const QString& title, QLayout* content) {
  auto* box = new QGroupBox(title);
  box->setLayout(content);
  return box;
}

QToolButton* toolButton(const QString& text, const QString& tooltip, const QString& object_name) {
  auto* b = new QToolButton;
  b->setText(text);
  b->setToolTip(tooltip);
  b->setObjectName(object_name);
  b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  return b;
}

// Valid, distinct rows of `rows`, ascending.
std::vector<std::size_t> cleanRows(const QList<int>& rows, std::size_t count) {
  std::set<std::size_t> unique;
  for (int r : rows) {
    if (r >= 0 && static_cast<std::size_t>(r) < count) unique.insert(static_cast<std::size_t>(r));
  }
  return {unique.begin(), unique.end()};
}

}  // namespace

ModelPage::ModelPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      tables_model_(new TableListModel(this)),
      tables_proxy_(new QSortFilterProxyModel(this)),
      tables_view_(new QTableView),
      size_chart_(new TableSizeChart) {
  tables_proxy_->setSourceModel(tables_model_);
  tables_proxy_->setSortRole(TableListModel::SortRole);
  tables_proxy_->setFilterKeyColumn(TableListModel::Name);
  tables_proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  tables_view_->setObjectName(QStringLiteral("tablesView"));
  tables_view_->setModel(tables_proxy_);
  tables_view_->setItemDelegate(new TableItemDelegate(tables_view_));
  tables_view_->setSortingEnabled(true);
  tables_view_->sortByColumn(-1, Qt::AscendingOrder);  // model order until the user clicks a header
  tables_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tables_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  tables_view_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                                QAbstractItemView::AnyKeyPressed);
  tables_view_->setAlternatingRowColors(true);
  tables_view_->setWordWrap(false);
  tables_view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  // Fixed row height: sizing 1,000 rows to their contents is what makes big models slow.
  tables_view_->verticalHeader()->setVisible(false);
  tables_view_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  tables_view_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 10);
  QHeaderView* header = tables_view_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setStretchLastSection(false);
  header->setHighlightSections(false);
  header->setSortIndicatorClearable(true);  // a third click restores the model order

  auto* table_box = new QVBoxLayout;
  table_box->addWidget(buildToolbar());
  table_box->addWidget(tables_view_, 1);
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("modelPageMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setMinimumHeight(fontMetrics().height() + 4);
  table_box->addWidget(message_);

  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter->setChildrenCollapsible(false);
  splitter->addWidget(groupAround(tr("Embedding tables"), table_box));
  splitter->addWidget(buildSidePanel());
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter);

  // Keyboard: Delete removes, Ctrl+D duplicates, Insert adds (while the
  // table has focus, not its cell editors); Ctrl+F goes to the filter.
  const auto viewAction = [this](const QString& text, const QKeySequence& key, Qt::ShortcutContext context, auto slot) {
    auto* a = new QAction(text, tables_view_);
    a->setShortcut(key);
    a->setShortcutContext(context);
    connect(a, &QAction::triggered, this, slot);
    tables_view_->addAction(a);
    return a;
  };
  viewAction(tr("Add Table"), QKeySequence(Qt::Key_Insert), Qt::WidgetShortcut, &ModelPage::onAdd);
  viewAction(tr("Duplicate"), QKeySequence(Qt::CTRL | Qt::Key_D), Qt::WidgetShortcut, &ModelPage::onDuplicate);
  viewAction(tr("Remove"), QKeySequence::Delete, Qt::WidgetShortcut, &ModelPage::onRemove)
      ->setObjectName(QStringLiteral("actionRemoveTables"));
  auto* find = new QAction(this);
  find->setShortcut(QKeySequence::Find);
  find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(find, &QAction::triggered, filter_edit_, [this] {
    filter_edit_->setFocus(Qt::ShortcutFocusReason);
    filter_edit_->selectAll();
  });
  addAction(find);

  // Context menu: the toolbar's actions and a dtype for all selected tables at
  // once ("what if the big tables were fp16?").
  auto* separator = new QAction(tables_view_);
  separator->setSeparator(true);
  tables_view_->addAction(separator);
  auto* dtype_menu = new QMenu(tr("Set DType of Selected Tables"), this);
  for (core::DType d : {core::DType::FP32, core::DType::FP16, core::DType::BF16, core::DType::INT8}) {
    connect(dtype_menu->addAction(QString::fromLatin1(core::toString(d))), &QAction::triggered, this,
            [this, d] { setDType(selectedRows(), d); });
  }
  set_dtype_action_ = dtype_menu->menuAction();
  tables_view_->addAction(set_dtype_action_);

  connect(tables_model_, &TableListModel::tableEdited, this, &ModelPage::onTableEdited);
  connect(tables_model_, &TableListModel::editRejected, this, [this](const QString& m) { showMessage(m, true); });
  connect(tables_model_, &QAbstractItemModel::modelReset, this, &ModelPage::fitColumns);
  for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved}) {
    connect(tables_proxy_, signal, this, &ModelPage::updateFilterSummary);
  }
  connect(tables_proxy_, &QAbstractItemModel::modelReset, this, &ModelPage::updateFilterSummary);
  connect(tables_proxy_, &QAbstractItemModel::layoutChanged, this, &ModelPage::updateFilterSummary);
  connect(tables_view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ModelPage::updateActions);
  connect(document_, &ProjectDocument::projectChanged, this, &ModelPage::refresh);
  refresh();
  fitColumns();
}

QWidget* ModelPage::buildToolbar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);

  auto* add = toolButton(tr("Add"), tr("Add a table at the end (Insert)"), QStringLiteral("addTableButton"));
  duplicate_button_ =
      toolButton(tr("Duplicate"), tr("Copy the selected tables (Ctrl+D)"), QStringLiteral("duplicateTablesButton"));
  remove_button_ =
      toolButton(tr("Remove"), tr("Remove the selected tables (Delete)"), QStringLiteral("removeTablesButton"));
  auto* import = toolButton(tr("Import\u2026"),
                            tr("Replace the tables with those of a CSV file, or the model with a model or project "
                               "file"),
                            QStringLiteral("importTablesButton"));
  auto* import_menu = new QMenu(import);
  connect(import_menu->addAction(tr("Replace Tables From File\u2026")), &QAction::triggered, this,
          [this] { onImport(ImportMode::Replace); });
  connect(import_menu->addAction(tr("Append Tables From File\u2026")), &QAction::triggered, this,
          [this] { onImport(ImportMode::Append); });
  import->setMenu(import_menu);
  import->setPopupMode(QToolButton::MenuButtonPopup);
  auto* export_csv =
      toolButton(tr("Export CSV\u2026"), tr("Write every table to a CSV file"), QStringLiteral("exportCsvButton"));

  connect(add, &QToolButton::clicked, this, &ModelPage::onAdd);
  connect(duplicate_button_, &QToolButton::clicked, this, &ModelPage::onDuplicate);
  connect(remove_button_, &QToolButton::clicked, this, &ModelPage::onRemove);
  connect(import, &QToolButton::clicked, this, [this] { onImport(ImportMode::Replace); });
  connect(export_csv, &QToolButton::clicked, this, &ModelPage::onExport);

  filter_edit_ = new QLineEdit;
  filter_edit_->setObjectName(QStringLiteral("tableFilter"));
  filter_edit_->setPlaceholderText(tr("Filter by name (Ctrl+F)"));
  filter_edit_->setClearButtonEnabled(true);
  filter_edit_->setMinimumWidth(140);
  filter_count_ = new QLabel;
  filter_count_->setObjectName(QStringLiteral("tableFilterCount"));
  connect(filter_edit_, &QLineEdit::textChanged, this, [this](const QString& text) {
    tables_proxy_->setFilterFixedString(text);
    updateFilterSummary();
  });

  row->addWidget(add);
  row->addWidget(duplicate_button_);
  row->addWidget(remove_button_);
  row->addSpacing(8);
  row->addWidget(import);
  row->addWidget(export_csv);
  row->addSpacing(12);
  row->addWidget(filter_edit_, 1);
  row->addWidget(filter_count_);
  return bar;
}

QWidget* ModelPage::buildSidePanel() {
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignLeft);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::DontWrapRows);

  name_edit_ = new QLineEdit;
  name_edit_->setObjectName(QStringLiteral("model.name"));
  connect(name_edit_, &QLineEdit::editingFinished, this, [this] {
    const QString name = name_edit_->text().trimmed();
    const core::ModelSpec& model = document_->project().model;
    if (name.isEmpty()) {
      name_edit_->setText(qs(model.name));
      showMessage(tr("The model needs a name; it stays \"%1\".").arg(qs(model.name)), true);
      return;
    }
    if (name.toStdString() == model.name) return;
    core::ModelSpec m = model;
    m.name = name.toStdString();
    editModel(std::move(m), tr("Rename model to \"%1\"").arg(name));
  });

  batch_spin_ = new QSpinBox;
  batch_spin_->setObjectName(QStringLiteral("model.batch"));
  batch_spin_->setRange(1, static_cast<int>(core::kMaxBatchPerGpu));  // as shardscope.model/1 allows
  batch_spin_->setGroupSeparatorShown(true);
  batch_spin_->setKeyboardTracking(false);  // one edit per value entered, not per digit
  batch_spin_->setToolTip(tr("Samples per GPU per step; the global batch is this \u00d7 the number of GPUs"));
  connect(batch_spin_, &QSpinBox::valueChanged, this, [this](int value) {
    const core::ModelSpec& model = document_->project().model;
    if (static_cast<std::uint32_t>(value) == model.batch_size_per_gpu) return;
    core::ModelSpec m = model;
    m.batch_size_per_gpu = static_cast<std::uint32_t>(value);
    // The text first: the arguments' order is unspecified, and m is moved into the edit.
    const QString what = tr("Set batch per GPU to %1").arg(qs(report::formatCount(m.batch_size_per_gpu)));
    editModel(std::move(m), what);
  });

  optimizer_combo_ = new QComboBox;
  optimizer_combo_->setObjectName(QStringLiteral("model.optimizer"));
  for (core::Optimizer o : kOptimizers) optimizer_combo_->addItem(qs(report::optimizerText(o)), static_cast<int>(o));
  optimizer_combo_->setToolTip(tr("Decides the optimizer state stored with each table"));
  connect(optimizer_combo_, &QComboBox::activated, this, [this](int i) {
    const core::Optimizer o = kOptimizers[i];
    const core::ModelSpec& model = document_->project().model;
    if (o == model.optimizer) return;
    core::ModelSpec m = model;
    m.optimizer = o;
    editModel(std::move(m), tr("Set optimizer to %1").arg(qs(report::optimizerText(o))));
  });

  form->addRow(tr("Name:"), name_edit_);
  form->addRow(tr("Batch per GPU:"), batch_spin_);
  form->addRow(tr("Optimizer:"), optimizer_combo_);
  auto* line = new QFrame;
  line->setFrameShape(QFrame::HLine);
  line->setFrameShadow(QFrame::Sunken);
  form->addRow(line);
  const std::pair<const char*, QString> rows[] = {
      {"model.tables", tr("Embedding tables:")},
      {"model.lookups", tr("Lookups per sample:")},
      {"model.embedding_size", tr("Embedding weights:")},
      {"model.state_size", tr("With optimizer state:")},
      {"model.largest", tr("Largest table:")},
      {"model.dense_params", tr("Dense parameters:")},
      {"model.dense_flops", tr("Dense FLOPs per sample:")},
  };
  for (const auto& [key, label] : rows) {
    auto* value = new QLabel;
    value->setObjectName(QString::fromLatin1(key));
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(label, value);
    values_.insert(QString::fromLatin1(key), value);
  }

  size_chart_->setMinimumHeight(240);
  auto* chart_box = new QVBoxLayout;
  chart_box->addWidget(size_chart_);

  auto* side = new QWidget;
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(groupAround(tr("Model"), form));
  side_layout->addWidget(groupAround(tr("Table sizes"), chart_box), 1);
  side->setMinimumWidth(340);
  return side;
}

// ---------------------------------------------------------------- refresh

void ModelPage::refresh() {
  const core::Project& project = document_->project();
  tables_model_->setTables(project.model.tables);
  size_chart_->setTables(project.model.tables);
  fillSummary(project);
  updateFilterSummary();
  updateActions();
}

void ModelPage::fillSummary(const core::Project& project) {
  const core::ModelSpec& m = project.model;
  {
    const QSignalBlocker block_name(name_edit_);
    const QSignalBlocker block_batch(batch_spin_);
    const QSignalBlocker block_optimizer(optimizer_combo_);
    if (!name_edit_->hasFocus() || !name_edit_->isModified()) {
      name_edit_->setText(qs(m.name));
      name_edit_->setCursorPosition(0);  // show the start of a long name
      name_edit_->setToolTip(qs(m.name));
    }
    batch_spin_->setValue(static_cast<int>(std::min<std::uint64_t>(m.batch_size_per_gpu, core::kMaxBatchPerGpu)));
    optimizer_combo_->setCurrentIndex(optimizer_combo_->findData(static_cast<int>(m.optimizer)));
  }
  const std::uint64_t weights = m.totalWeightBytes();
  setSummary(QStringLiteral("model.tables"), qs(report::formatCount(m.tables.size())));
  setSummary(QStringLiteral("model.lookups"), number(m.lookupsPerSample()),
             tr("Ids per sample over all tables (the sum of their pooling)"));
  setSummary(QStringLiteral("model.embedding_size"), gib(weights),
             tr("%1 bytes; 1 GiB = 2\u00b3\u2070 bytes").arg(qs(report::formatCount(weights))));
  const std::uint64_t state = report::stateBytes(project);
  setSummary(QStringLiteral("model.state_size"), tr("%1 (+%2)").arg(gib(state), gib(state - std::min(state, weights))),
             tr("Weights plus the %1 state kept with each row, as the planner counts them")
                 .arg(qs(report::optimizerText(m.optimizer))));
  const auto largest = std::max_element(m.tables.begin(), m.tables.end(),
                                        [](const auto& a, const auto& b) { return a.weightBytes() < b.weightBytes(); });
  if (largest == m.tables.end()) {
    setSummary(QStringLiteral("model.largest"), tr("\u2014"));
  } else {
    const double share =
        weights > 0 ? 100.0 * static_cast<double>(largest->weightBytes()) / static_cast<double>(weights) : 0.0;
    setSummary(
        QStringLiteral("model.largest"),
        tr("%1, %2 (%3%)").arg(qs(largest->name), gib(largest->weightBytes()), qs(report::formatFixed(share, 0))));
  }
  setSummary(QStringLiteral("model.dense_params"),
             qs(report::formatScaledCount(static_cast<double>(m.dense.parameters))),
             tr("%1 parameters").arg(qs(report::formatCount(m.dense.parameters))));
  setSummary(QStringLiteral("model.dense_flops"), qs(report::formatScaledCount(m.dense.flops_per_sample)),
             tr("Training FLOPs per sample, forward and backward"));
}

void ModelPage::setSummary(const QString& key, const QString& value, const QString& tooltip) {
  QLabel* label = values_.value(key);
  if (label == nullptr) return;
  label->setText(value);
  label->setToolTip(tooltip);
}

QString ModelPage::summaryValue(const QString& key) const {
  if (key == QLatin1String("model.name")) return name_edit_->text();
  if (key == QLatin1String("model.batch"))
    return qs(report::formatCount(static_cast<std::uint64_t>(batch_spin_->value())));
  if (key == QLatin1String("model.optimizer")) return optimizer_combo_->currentText();
  const QLabel* label = values_.value(key);
  return label != nullptr ? label->text() : QString();
}

void ModelPage::fitColumns() {
  // Columns sized to their contents plus air, once per table set (not per
  // edit: measuring 1,000 rows is not free); the view asks for that width so
  // the splitter gives the rest to the summary and the chart.
  QHeaderView* header = tables_view_->horizontalHeader();
  // The widest of the first rows and the ones in view: 1,000 rows of one table's figures are alike.
  header->setResizeContentsPrecision(100);
  tables_view_->resizeColumnsToContents();
  constexpr int kColumnPadding = 18;
  for (int c = 0; c < header->count(); ++c) {
    int width = header->sectionSize(c) + kColumnPadding;
    if (c == TableListModel::Name) width = std::clamp(width, 100, kMaxNameColumnWidth);
    if (c == TableListModel::Access)
      width = std::max(width, fontMetrics().horizontalAdvance(QStringLiteral("measured (1024 buckets)")) +
                                  kColumnPadding);  // also a measured access attached later
    header->resizeSection(c, width);
  }
  const int width =
      header->length() + 2 * tables_view_->frameWidth() + tables_view_->verticalScrollBar()->sizeHint().width();
  tables_view_->setMinimumWidth(width);
}

void ModelPage::updateFilterSummary() {
  const int total = tables_model_->rowCount();
  const int shown = tables_proxy_->rowCount();
  const QString total_text = qs(report::formatCount(static_cast<std::uint64_t>(total)));
  filter_count_->setText(
      filter_edit_->text().isEmpty() && shown == total
          ? tablesText(static_cast<std::size_t>(total))
          : tr("%1 of %2 tables").arg(qs(report::formatCount(static_cast<std::uint64_t>(shown))), total_text));
}

QString ModelPage::filterSummary() const { return filter_count_->text(); }

void ModelPage::updateActions() {
  const bool selected = tables_view_->selectionModel()->hasSelection();
  duplicate_button_->setEnabled(selected);
  remove_button_->setEnabled(selected);
  set_dtype_action_->setEnabled(selected);
}

void ModelPage::showMessage(const QString& text, bool is_error) {
  message_->setText(text);
  message_->setStyleSheet(is_error ? QStringLiteral("color: #b03a2e;") : QString());
}

QString ModelPage::message() const { return message_->text(); }

// ---------------------------------------------------------------- edits

void ModelPage::editModel(core::ModelSpec model, const QString& description) {
  core::Project project = document_->project();
  project.model = std::move(model);
  document_->edit(std::move(project), description);
}

void ModelPage::onTableEdited(int row, int column) {
  const core::ModelSpec& before = document_->project().model;
  const std::vector<core::TableSpec>& tables = tables_model_->tables();
  if (row < 0 || static_cast<std::size_t>(row) >= tables.size() || before.tables.size() != tables.size()) return;
  const QString old_name = qs(before.tables[static_cast<std::size_t>(row)].name);
  const QString description = column == TableListModel::Name
                                  ? tr("Rename %1 to %2").arg(old_name, qs(tables[static_cast<std::size_t>(row)].name))
                                  : tr("Edit %1 of %2").arg(TableListModel::columnName(column), old_name);
  core::ModelSpec m = before;
  m.tables = tables;
  showMessage({}, false);
  editModel(std::move(m), description);
}

int ModelPage::addTable() {
  core::ModelSpec m = document_->project().model;
  const std::unordered_set<std::string> taken = report::namesOf(m.tables);
  core::TableSpec t;
  for (std::size_t n = m.tables.size() + 1;; ++n) {
    t.name = "table_";
    t.name += std::to_string(n);
    if (!taken.contains(t.name)) break;
  }
  t.rows = kNewTableRows;
  t.dim = m.tables.empty() ? 128 : m.tables.back().dim;
  t.dtype = m.tables.empty() ? core::DType::FP32 : m.tables.back().dtype;
  const QString description = tr("Add table %1").arg(qs(t.name));
  m.tables.push_back(std::move(t));
  const int row = static_cast<int>(m.tables.size()) - 1;
  editModel(std::move(m), description);
  return row;
}

QList<int> ModelPage::duplicateRows(const QList<int>& rows) {
  core::ModelSpec m = document_->project().model;
  const std::vector<std::size_t> originals = cleanRows(rows, m.tables.size());
  if (originals.empty()) return {};
  std::unordered_set<std::string> taken = report::namesOf(m.tables);
  QList<int> copies;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    const std::size_t at = originals[i] + i;  // earlier copies moved it down
    core::TableSpec copy = m.tables[at];
    copy.name = report::freeName(copy.name + "_copy", taken);
    taken.insert(copy.name);
    m.tables.insert(m.tables.begin() + static_cast<std::ptrdiff_t>(at + 1), std::move(copy));
    copies << static_cast<int>(at + 1);
  }
  const QString description =
      originals.size() == 1 ? tr("Duplicate %1").arg(qs(m.tables[static_cast<std::size_t>(copies.front()) - 1].name))
                            : tr("Duplicate %1 tables").arg(originals.size());
  editModel(std::move(m), description);
  return copies;
}

void ModelPage::setDType(const QList<int>& rows, core::DType dtype) {
  core::ModelSpec m = document_->project().model;
  const std::vector<std::size_t> chosen = cleanRows(rows, m.tables.size());
  if (chosen.empty()) return;
  for (std::size_t r : chosen) m.tables[r].dtype = dtype;
  const QString type = QString::fromLatin1(core::toString(dtype));
  const QString description = chosen.size() == 1 ? tr("Edit dtype of %1").arg(qs(m.tables[chosen.front()].name))
                                                 : tr("Set dtype of %1 to %2").arg(tablesText(chosen.size()), type);
  editModel(std::move(m), description);
}

core::Status ModelPage::removeRows(const QList<int>& rows) {
  core::ModelSpec m = document_->project().model;
  const std::vector<std::size_t> doomed = cleanRows(rows, m.tables.size());
  if (doomed.empty()) return core::Ok{};
  if (doomed.size() == m.tables.size()) {
    return core::Error{
        tr("A model needs at least one table; removing all %1 would leave none.").arg(m.tables.size()).toStdString()};
  }
  const QString description = doomed.size() == 1 ? tr("Remove %1").arg(qs(m.tables[doomed.front()].name))
                                                 : tr("Remove %1 tables").arg(doomed.size());
  for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {
    m.tables.erase(m.tables.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  editModel(std::move(m), description);
  return core::Ok{};
}

core::Status ModelPage::importTables(const QString& path, ImportMode mode) {
  core::Result<report::ImportedTables> read = report::readTablesFile(path.toStdString());
  if (!read) return read.error();
  const QString file = QFileInfo(path).fileName();
  core::ModelSpec m = document_->project().model;
  const std::size_t count = read->tables.size();
  QString description;
  if (mode == ImportMode::Append) {
    const std::unordered_set<std::string> taken = report::namesOf(m.tables);
    QStringList clashes;
    for (const core::TableSpec& t : read->tables) {
      if (taken.contains(t.name)) clashes << qs(t.name);
    }
    if (!clashes.isEmpty()) {
      const int total = static_cast<int>(clashes.size());
      if (clashes.size() > 10) clashes = clashes.mid(0, 10) << QStringLiteral("\u2026");
      return core::Error{path.toStdString() + ": " +
                         tr("%1 with names the model already uses: %2 (rename them in the file, or "
                            "import with Replace)")
                             .arg(tablesText(static_cast<std::size_t>(total)), clashes.join(QStringLiteral(", ")))
                             .toStdString()};
    }
    m.tables.insert(m.tables.end(), read->tables.begin(), read->tables.end());
    description = tr("Append %1 from %2").arg(tablesText(count), file);
  } else if (read->model) {
    m = *read->model;
    description = tr("Import model \"%1\" (%2) from %3").arg(qs(m.name), tablesText(count), file);
  } else {
    m.tables = std::move(read->tables);
    description = tr("Import %1 from %2").arg(tablesText(count), file);
  }
  editModel(std::move(m), description);
  QString text = description + QLatin1Char('.');
  if (!read->warnings.empty()) {
    QStringList warnings;
    for (const std::string& w : read->warnings) warnings << qs(w);
    text += QLatin1Char(' ') + warnings.join(QLatin1Char(' '));
  }
  showMessage(text, false);
  return core::Ok{};
}

core::Status ModelPage::exportCsv(const QString& path) const {
  return core::saveTablesCsv(path.toStdString(), document_->project().model.tables);
}

// ---------------------------------------------------------------- selection, filter

void ModelPage::setFilterText(const QString& text) { filter_edit_->setText(text); }

QList<int> ModelPage::selectedRows() const {
  QList<int> rows;
  for (const QModelIndex& i : tables_view_->selectionModel()->selectedRows()) {
    rows << tables_proxy_->mapToSource(i).row();
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

void ModelPage::selectRows(const QList<int>& rows) {
  QItemSelection selection;
  QModelIndex first;
  for (int r : rows) {
    const QModelIndex i = tables_proxy_->mapFromSource(tables_model_->index(r, 0));
    if (!i.isValid()) continue;
    if (!first.isValid()) first = i;
    selection.select(i, i.siblingAtColumn(TableListModel::ColumnCount - 1));
  }
  QItemSelectionModel* sm = tables_view_->selectionModel();
  sm->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  if (first.isValid()) {
    sm->setCurrentIndex(first, QItemSelectionModel::NoUpdate);
    tables_view_->scrollTo(first);
  }
}

// ---------------------------------------------------------------- buttons

void ModelPage::onAdd() {
  const int row = addTable();
  QModelIndex at = tables_proxy_->mapFromSource(tables_model_->index(row, TableListModel::Name));
  if (!at.isValid()) {  // hidden by the filter: show it
    filter_edit_->clear();
    at = tables_proxy_->mapFromSource(tables_model_->index(row, TableListModel::Name));
  }
  selectRows({row});
  tables_view_->setFocus();
  if (at.isValid()) tables_view_->edit(at);
  showMessage(tr("Added %1; type its name, then set rows and dim.")
                  .arg(qs(tables_model_->tables()[static_cast<std::size_t>(row)].name)),
              false);
}

void ModelPage::onDuplicate() {
  const QList<int> copies = duplicateRows(selectedRows());
  if (!copies.isEmpty()) selectRows(copies);
}

void ModelPage::onRemove() {
  const QList<int> rows = selectedRows();
  if (rows.isEmpty()) return;
  const core::Status removed = removeRows(rows);
  if (!removed) {
    showMessage(qs(removed.error().message), true);
    return;
  }
  // Keep a row selected where the first one was, so Delete can be pressed again.
  const int next = std::min(rows.front(), tables_model_->rowCount() - 1);
  if (next >= 0) selectRows({next});
  showMessage({}, false);
}

void ModelPage::onImport(ImportMode mode) {
  const QString path = QFileDialog::getOpenFileName(
      this, mode == ImportMode::Append ? tr("Append Tables From File") : tr("Import Tables"), QString(),
      tr("Tables (*.csv *.json *.shardscope);;CSV files (*.csv);;Model or project files (*.json *.shardscope);;"
         "All files (*)"));
  if (path.isEmpty()) return;
  const core::Status imported = importTables(path, mode);
  if (imported) return;
  QMessageBox box(QMessageBox::Warning, tr("Import Tables"),
                  tr("Could not import %1. The model is unchanged.").arg(QFileInfo(path).fileName()), QMessageBox::Ok,
                  this);
  box.setInformativeText(qs(imported.error().message));
  box.exec();
}

void ModelPage::onExport() {
  const QString suggested =
      qs(document_->project().model.name.empty() ? "tables" : document_->project().model.name) + QStringLiteral(".csv");
  QString path = QFileDialog::getSaveFileName(this, tr("Export Tables as CSV"), suggested, tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
  const core::Status saved = exportCsv(path);
  if (saved) {
    showMessage(tr("Exported %1 to %2.")
                    .arg(tablesText(static_cast<std::size_t>(tables_model_->rowCount())), QFileInfo(path).fileName()),
                false);
    return;
  }
  QMessageBox box(QMessageBox::Warning, tr("Export Tables"), tr("Could not export the tables."), QMessageBox::Ok, this);
  box.setInformativeText(qs(saved.error().message));
  box.exec();
}

}  // namespace shardscope::app
