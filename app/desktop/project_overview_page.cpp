#include "project_overview_page.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "project_document.h"
#include "table_list_model.h"
#include "table_size_chart.h"

namespace shardscope::app {

namespace {

QGroupBox* groupAround(const QString& title, QWidget* content) {
  auto* box = new QGroupBox(title);
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(content);
  return box;
}

QGroupBox* groupAround(const QString& title, QLayout* content) {
  auto* box = new QGroupBox(title);
  box->setLayout(content);
  return box;
}

QFormLayout* makeForm() {
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignLeft);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::DontWrapRows);
  return form;
}

}  // namespace

ProjectOverviewPage::ProjectOverviewPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      tables_model_(new TableListModel(this)),
      tables_proxy_(new QSortFilterProxyModel(this)),
      tables_view_(new QTableView),
      model_form_(makeForm()),
      cluster_form_(makeForm()),
      size_chart_(new TableSizeChart) {
  tables_proxy_->setSourceModel(tables_model_);
  tables_proxy_->setSortRole(TableListModel::SortRole);

  tables_view_->setObjectName(QStringLiteral("tablesView"));
  tables_view_->setModel(tables_proxy_);
  tables_view_->setSortingEnabled(true);
  tables_view_->sortByColumn(-1, Qt::AscendingOrder);  // file order until the user clicks a header
  tables_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tables_view_->setAlternatingRowColors(true);
  tables_view_->setWordWrap(false);
  tables_view_->verticalHeader()->setVisible(false);
  tables_view_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  QHeaderView* header = tables_view_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setStretchLastSection(false);
  header->setHighlightSections(false);
  header->setSortIndicatorClearable(true);  // a third click restores the file order

  size_chart_->setMinimumHeight(220);

  // Tables on the left at the width of their columns and the full height;
  // summaries and the size chart share the rest.
  auto* side = new QWidget;
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(groupAround(tr("Model"), model_form_));
  side_layout->addWidget(groupAround(tr("Cluster"), cluster_form_));
  side_layout->addWidget(groupAround(tr("Table sizes"), size_chart_), 1);

  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter->setChildrenCollapsible(false);
  splitter->addWidget(groupAround(tr("Embedding tables"), tables_view_));
  splitter->addWidget(side);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter);

  connect(document_, &ProjectDocument::projectChanged, this, &ProjectOverviewPage::refresh);
  refresh();
}

QString ProjectOverviewPage::summaryValue(const QString& key) const {
  const QLabel* label = values_.value(key);
  return label != nullptr ? label->text() : QString();
}

void ProjectOverviewPage::refresh() {
  const core::Project& project = document_->project();
  tables_model_->setTables(project.model.tables);
  fitTablesViewToColumns();
  size_chart_->setTables(project.model.tables);
  fillForm(model_form_, QStringLiteral("model."), modelSummaryRows(project.model));
  fillForm(cluster_form_, QStringLiteral("cluster."), clusterSummaryRows(project.cluster));
}

void ProjectOverviewPage::fitTablesViewToColumns() {
  // Columns sized to their contents plus air; the view asks for exactly that
  // width so the splitter gives the rest to the summaries and the chart.
  tables_view_->resizeColumnsToContents();
  QHeaderView* header = tables_view_->horizontalHeader();
  constexpr int kColumnPadding = 16;
  for (int c = 0; c < header->count(); ++c) header->resizeSection(c, header->sectionSize(c) + kColumnPadding);
  const int width = header->length() + 2 * tables_view_->frameWidth() +
                    tables_view_->verticalScrollBar()->sizeHint().width();
  tables_view_->setMinimumWidth(width);
}

void ProjectOverviewPage::fillForm(QFormLayout* form, const QString& prefix,
                                   const std::vector<SummaryRow>& rows) {
  // The rows' keys are fixed, so labels are made once and updated after.
  for (const SummaryRow& row : rows) {
    const QString key = prefix + QString::fromStdString(row.key);
    QLabel* value = values_.value(key);
    if (value == nullptr) {
      value = new QLabel;
      value->setObjectName(key);
      value->setTextInteractionFlags(Qt::TextSelectableByMouse);
      form->addRow(QString::fromStdString(row.label) + QLatin1Char(':'), value);
      values_.insert(key, value);
    }
    value->setText(QString::fromStdString(row.value));
  }
}

}  // namespace shardscope::app
