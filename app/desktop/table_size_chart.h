// A bar chart of embedding table sizes on a log scale: the few huge tables
// that dominate memory and the many tiny ones are visible at once.
#pragma once

#include <QWidget>

#include "shardscope/core/model.h"

class QCustomPlot;
class QCPBars;

namespace shardscope::app {

class TableSizeChart : public QWidget {
  Q_OBJECT

 public:
  explicit TableSizeChart(QWidget* parent = nullptr);

  void setTables(const std::vector<core::TableSpec>& tables);
  [[nodiscard]] int barCount() const;

 private:
  QCustomPlot* plot_;
  QCPBars* bars_;
};

}  // namespace shardscope::app
