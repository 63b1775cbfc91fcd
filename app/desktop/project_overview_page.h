// The first page of the main window: the model's embedding tables (sortable),
// a model summary, the cluster and a chart of table sizes. Read-only; it
// follows the ProjectDocument and never loads anything itself.
#pragma once

#include <QHash>
#include <QWidget>

#include "display_format.h"

class QFormLayout;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace shardscope::app {

class ProjectDocument;
class TableListModel;
class TableSizeChart;

class ProjectOverviewPage : public QWidget {
  Q_OBJECT

 public:
  explicit ProjectOverviewPage(ProjectDocument* document, QWidget* parent = nullptr);

  [[nodiscard]] QTableView* tablesView() const { return tables_view_; }
  [[nodiscard]] TableListModel* tablesModel() const { return tables_model_; }
  [[nodiscard]] QSortFilterProxyModel* tablesProxy() const { return tables_proxy_; }
  [[nodiscard]] TableSizeChart* sizeChart() const { return size_chart_; }
  // Value shown for a summary row, by key: "model.tables", "cluster.world_size".
  [[nodiscard]] QString summaryValue(const QString& key) const;

 private:
  void refresh();
  void fitTablesViewToColumns();
  void fillForm(QFormLayout* form, const QString& prefix, const std::vector<SummaryRow>& rows);

  ProjectDocument* document_;
  TableListModel* tables_model_;
  QSortFilterProxyModel* tables_proxy_;
  QTableView* tables_view_;
  QFormLayout* model_form_;
  QFormLayout* cluster_form_;
  TableSizeChart* size_chart_;
  QHash<QString, QLabel*> values_;
};

}  // namespace shardscope::app
