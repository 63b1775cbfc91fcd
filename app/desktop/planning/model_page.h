// The Model page: the model's embedding tables as an editable, sortable,
// filterable table (add, duplicate, remove, import from CSV or a model file,
// export to CSV), the model-level fields a planner needs (name, batch per
// GPU, optimizer) with a summary, and a log-scale histogram of table sizes.
// It follows the ProjectDocument and changes it only through edit(), so every
// change is one undoable step. User guide: docs/desktop/model.md.
#pragma once

#include <QHash>
#include <QList>
#include <QStringList>
#include <QWidget>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QToolButton;

namespace shardscope::app {

class ProjectDocument;
class TableListModel;
class TableSizeChart;

class ModelPage : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPage(ProjectDocument* document, QWidget* parent = nullptr);

  // ---- Non-interactive operations (tests, scripts); each is one undoable
  // edit named for what it did. Rows are rows of tablesModel() (the model's
  // table order), not of the sorted, filtered view.

  // How an import treats the tables already there.
  enum class ImportMode {
    Replace,  // a CSV replaces the tables; a model or project file the whole model
    Append,   // the file's tables go after the existing ones (names must not clash)
  };
  // A CSV of tables (docs/formats/model-csv.md), a shardscope.model/1 file or
  // a project (its model), told apart by content. On failure the project is
  // unchanged and the error names the file (and line/column or JSON path).
  [[nodiscard]] core::Status importTables(const QString& path, ImportMode mode = ImportMode::Replace);
  // Every table of the model (not only the filtered ones), as CSV.
  [[nodiscard]] core::Status exportCsv(const QString& path) const;
  // Appends a table ("table_27", 1,000,000 rows, dim and dtype of the last
  // table); returns its row.
  int addTable();
  // Copies of the rows ("cat_3_copy"), each right after its original;
  // returns the copies' rows.
  QList<int> duplicateRows(const QList<int>& rows);
  // Fails (and changes nothing) when it would leave the model without tables.
  [[nodiscard]] core::Status removeRows(const QList<int>& rows);
  // One edit for all `rows` (the view's context menu, on the selection).
  void setDType(const QList<int>& rows, core::DType dtype);

  // Shows tables whose name contains `text`, ignoring case.
  void setFilterText(const QString& text);
  // "26 tables", or "3 of 26 tables" while filtering.
  [[nodiscard]] QString filterSummary() const;
  // Rows of tablesModel() selected in the view, ascending.
  [[nodiscard]] QList<int> selectedRows() const;
  void selectRows(const QList<int>& rows);

  // Value shown in the summary panel, by key: "model.name", "model.batch",
  // "model.optimizer", "model.tables", "model.embedding_size", "model.state_size",
  // "model.lookups", "model.largest", "model.dense_params", "model.dense_flops".
  [[nodiscard]] QString summaryValue(const QString& key) const;
  // The last message under the toolbar: a rejected edit, an import's warnings.
  [[nodiscard]] QString message() const;

  [[nodiscard]] QTableView* tablesView() const { return tables_view_; }
  [[nodiscard]] TableListModel* tablesModel() const { return tables_model_; }
  [[nodiscard]] QSortFilterProxyModel* tablesProxy() const { return tables_proxy_; }
  [[nodiscard]] TableSizeChart* sizeChart() const { return size_chart_; }
  [[nodiscard]] QLineEdit* filterEdit() const { return filter_edit_; }
  [[nodiscard]] QSpinBox* batchSpinBox() const { return batch_spin_; }
  [[nodiscard]] QComboBox* optimizerComboBox() const { return optimizer_combo_; }
  [[nodiscard]] QLineEdit* modelNameEdit() const { return name_edit_; }

 private slots:
  void refresh();
  void onTableEdited(int row, int column);
  void onAdd();
  void onDuplicate();
  void onRemove();
  void onImport(ImportMode mode);
  void onExport();
  void updateActions();
  void updateFilterSummary();

 private:
  QWidget* buildToolbar();
  QWidget* buildSidePanel();
  void editModel(core::ModelSpec model, const QString& description);
  void showMessage(const QString& text, bool is_error);
  void fitColumns();
  void fillSummary(const core::Project& project);
  void setSummary(const QString& key, const QString& value, const QString& tooltip = {});

  ProjectDocument* document_;
  TableListModel* tables_model_;
  QSortFilterProxyModel* tables_proxy_;
  QTableView* tables_view_;
  TableSizeChart* size_chart_;
  QLineEdit* filter_edit_ = nullptr;
  QLabel* filter_count_ = nullptr;
  QLabel* message_ = nullptr;
  QToolButton* duplicate_button_ = nullptr;
  QToolButton* remove_button_ = nullptr;
  QAction* set_dtype_action_ = nullptr;
  QLineEdit* name_edit_ = nullptr;
  QSpinBox* batch_spin_ = nullptr;
  QComboBox* optimizer_combo_ = nullptr;
  QHash<QString, QLabel*> values_;
  int fitted_row_count_ = -1;  // columns are fitted to contents once per table set
};

}  // namespace shardscope::app
