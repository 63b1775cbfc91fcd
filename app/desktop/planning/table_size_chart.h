// A histogram of embedding table sizes on a log scale: how many tables weigh
// 1-4 MiB, 4-16 MiB, ... 16-64 GiB (bins of a factor of 4 of weight bytes), so
// the few huge tables that decide sharding and the long tail of small ones
// are visible at once. Hovering a bar lists its tables.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/report/table_size_histogram.h"

class QCustomPlot;
class QCPBars;

namespace shardscope::app {

class TableSizeChart : public QWidget {
  Q_OBJECT

 public:
  // Bin k holds sizes in [4^k, 4^(k+1)) bytes; the x axis is log2 of the bytes.
  static constexpr int kOctavesPerBin = report::kOctavesPerBin;

  // A bin with the names of its largest tables, as the tooltip lists them.
  struct Bin : report::TableSizeBin {
    QStringList names;  // the largest first, at most report::kMaxNamesPerBin
  };

  explicit TableSizeChart(QWidget* parent = nullptr);

  void setTables(const std::vector<core::TableSpec>& tables);

  // Consecutive bins from the smallest table's to the largest's (empty ones
  // included, so the axis has no gaps); empty without tables.
  [[nodiscard]] const std::vector<Bin>& bins() const { return bins_; }
  [[nodiscard]] int tableCount() const { return table_count_; }
  // Tables whose weights fall in the bin holding `bytes` (0 outside the bins).
  [[nodiscard]] int tablesInBinOf(std::uint64_t bytes) const;
  // The bin under a point of the plot widget, or -1.
  [[nodiscard]] int binAt(const QPoint& plot_position) const;
  [[nodiscard]] QString binToolTip(int bin) const;
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }

 private:
  // Where bin k's bar stands on the x axis.
  static double binCenter(int k) { return (k + 0.5) * kOctavesPerBin; }
  void rebuild();
  void updateTickDensity();

  QCustomPlot* plot_;
  QCPBars* bars_;
  std::vector<Bin> bins_;
  int table_count_ = 0;
};

}  // namespace shardscope::app
