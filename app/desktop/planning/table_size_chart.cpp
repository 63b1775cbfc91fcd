#include "table_size_chart.h"

#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "shardscope/core/summary.h"
#include "shardscope/report/table_size_histogram.h"

namespace shardscope::app {

namespace {

constexpr double kBarFill = 0.86;    // share of a bin's width the bar covers
constexpr int kOctavesPerUnit = 10;  // 1 KiB -> 1 MiB -> 1 GiB

// 2^log2_bytes as an axis tick or a bin edge reads it: "512 B", "1 KiB", "16 GiB".
QString powerOfTwoBytes(int log2_bytes) {
  return QString::fromStdString(core::formatBytes(std::ldexp(1.0, log2_bytes), {.decimals = 0}));
}

// The x axis is in octaves (log2 of the bytes), so every tick sits on a power
// of two and reads as a whole binary size ("4 MiB", "1 GiB", never "954 KiB").
// Ticks at every bin edge (powers of 4) where the labels fit, else at every
// 1, 2, 3, ... binary units (1 KiB, 1 MiB, 1 GiB); sub-ticks mark the bin
// edges between them.
class BinaryByteTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override {
    const int room = std::max(1, tickCount());
    // The range is a hair wider than its whole units (rebuild()): that hair must not cost a tick.
    const double octaves = range.size() - 1e-3;
    if (octaves / TableSizeChart::kOctavesPerBin <= room) return TableSizeChart::kOctavesPerBin;
    return kOctavesPerUnit * std::max(1.0, std::ceil(octaves / kOctavesPerUnit / room));
  }
  int getSubTickCount(double tick_step) override {
    return static_cast<int>(std::lround(tick_step)) / TableSizeChart::kOctavesPerBin - 1;
  }
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format_char*/, int /*precision*/) override {
    return powerOfTwoBytes(static_cast<int>(std::lround(tick)));
  }
};

}  // namespace

TableSizeChart::TableSizeChart(QWidget* parent)
    : QWidget(parent), plot_(new QCustomPlot(this)), bars_(new QCPBars(plot_->xAxis, plot_->yAxis)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setObjectName(QStringLiteral("tableSizePlot"));
  plot_->setBackground(palette().base());
  plot_->setMouseTracking(true);

  // Room on the right for half of the last tick label ("1 TiB"): QCustomPlot
  // drops a label the widget border would clip.
  plot_->axisRect()->setMinimumMargins(QMargins(0, 0, 30, 0));
  plot_->xAxis->setTicker(QSharedPointer<BinaryByteTicker>::create());
  plot_->xAxis->setLabel(tr("Table size (weights, log scale)"));
  plot_->xAxis->grid()->setVisible(false);
  plot_->xAxis->setTickLength(0, 5);
  plot_->xAxis->setSubTickLength(0, 3);

  auto y_ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  y_ticker->setTickStep(1.0);
  y_ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  plot_->yAxis->setTicker(y_ticker);
  plot_->yAxis->setNumberFormat(QStringLiteral("f"));
  plot_->yAxis->setNumberPrecision(0);
  plot_->yAxis->setSubTicks(false);
  plot_->yAxis->setLabel(tr("Tables"));
  plot_->yAxis->grid()->setPen(QPen(QColor(0, 0, 0, 28), 1, Qt::DashLine));

  bars_->setWidthType(QCPBars::wtPlotCoords);
  bars_->setWidth(kBarFill * kOctavesPerBin);
  bars_->setPen(QPen(QColor(0x2a, 0x5f, 0x9e), 1));
  bars_->setBrush(QColor(0x3a, 0x7c, 0xc2));

  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const int bin = binAt(event->pos());
    if (bin < 0) {
      QToolTip::hideText();
      return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), binToolTip(bin), plot_);
  });
  // The tick density follows the plot's width at every replot, the one its
  // own resize makes included (a second, queued replot per resize cost more
  // than the first).
  connect(plot_, &QCustomPlot::beforeReplot, this, &TableSizeChart::updateTickDensity);
  setTables({});
}

void TableSizeChart::setTables(const std::vector<core::TableSpec>& tables) {
  bins_.clear();
  table_count_ = static_cast<int>(tables.size());
  for (report::TableSizeBin& bin : report::tableSizeBins(tables)) {
    Bin& b = bins_.emplace_back(Bin{std::move(bin), {}});
    for (std::size_t t : b.largest) b.names << QString::fromStdString(tables[t].name);
  }
  rebuild();
}

void TableSizeChart::rebuild() {
  plot_->clearItems();
  QVector<double> keys;
  QVector<double> counts;
  int most = 0;
  for (const Bin& b : bins_) {
    keys.append(binCenter(b.index));
    counts.append(b.tables);
    most = std::max(most, b.tables);
  }
  bars_->setData(keys, counts, /*alreadySorted=*/true);

  // Whole binary units (1 KiB, 1 MiB, ...) on both sides, so both ends are labelled.
  double lower = 20.0;  // 1 MiB .. 1 GiB when empty
  double upper = 30.0;
  if (!bins_.empty()) {
    lower = kOctavesPerUnit * std::floor(static_cast<double>(bins_.front().index * kOctavesPerBin) / kOctavesPerUnit);
    upper =
        kOctavesPerUnit * std::ceil(static_cast<double>((bins_.back().index + 1) * kOctavesPerBin) / kOctavesPerUnit);
  }
  // A hair wider so the ticks at both ends are kept, not trimmed.
  plot_->xAxis->setRange(lower - 1e-6, upper + 1e-6);
  // Head room for the counts written above the bars.
  plot_->yAxis->setRange(0.0, std::max(1.0, most * 1.18 + 0.3));

  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  for (const Bin& b : bins_) {
    if (b.tables == 0) continue;
    auto* label = new QCPItemText(plot_);
    label->setClipToAxisRect(false);
    label->position->setCoords(binCenter(b.index), b.tables);
    label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    label->setPadding(QMargins(0, 0, 0, 2));
    label->setFont(small);
    label->setColor(palette().color(QPalette::Text));
    label->setText(QString::number(b.tables));
  }
  if (bins_.empty()) {
    auto* empty = new QCPItemText(plot_);
    empty->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty->position->setCoords(0.5, 0.5);
    empty->setText(tr("No tables"));
    empty->setColor(palette().color(QPalette::PlaceholderText));
  }
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void TableSizeChart::updateTickDensity() {
  // A label such as "256 KiB" is ~50 px wide; one per 64 px keeps them apart.
  // The plot's width, not the axis rect's: that is only laid out during the replot.
  const int axis_width = plot_->width() - 80;  // less the y axis, its label and margins
  const int room = std::max(2, axis_width / 64);
  plot_->xAxis->ticker()->setTickCount(room);
}

int TableSizeChart::tablesInBinOf(std::uint64_t bytes) const {
  const int k = report::binIndexOf(bytes);
  for (const Bin& b : bins_) {
    if (b.index == k) return b.tables;
  }
  return 0;
}

int TableSizeChart::binAt(const QPoint& plot_position) const {
  if (bins_.empty() || !plot_->axisRect()->rect().contains(plot_position)) return -1;
  const double key = plot_->xAxis->pixelToCoord(plot_position.x());
  const int k = static_cast<int>(std::floor(key / kOctavesPerBin));
  const int i = k - bins_.front().index;
  if (i < 0 || i >= static_cast<int>(bins_.size())) return -1;
  return i;
}

QString TableSizeChart::binToolTip(int bin) const {
  if (bin < 0 || bin >= static_cast<int>(bins_.size())) return {};
  const Bin& b = bins_[static_cast<std::size_t>(bin)];
  const QString count = b.tables == 1 ? tr("1 table") : tr("%1 tables").arg(b.tables);
  QString text =
      tr("<b>%1</b> of %2 to %3")
          .arg(count, powerOfTwoBytes(b.index * kOctavesPerBin), powerOfTwoBytes((b.index + 1) * kOctavesPerBin));
  if (b.tables == 0) return text;
  text += tr(", %1 in all").arg(QString::fromStdString(core::formatBytes(std::round(b.total_bytes))));
  QStringList names = b.names;
  for (QString& n : names) n = n.toHtmlEscaped();
  if (b.tables > names.size()) names << tr("\u2026 %1 more").arg(b.tables - names.size());
  return text + QStringLiteral("<br>") + names.join(QStringLiteral(", "));
}

}  // namespace shardscope::app
