#include "comparison_chart.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <algorithm>
#include <cmath>
#include <set>

#include "chart_style.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

constexpr double kBarWidth = 0.38;
constexpr double kOffset = 0.2;  // A at x - offset, B at x + offset
constexpr int kMinPlotHeight = 220;

// Category labels, every one when they fit, else every 2nd, 4th, ... so that
// they never overlap (the axis width is known when the plot lays out).
class CategoryTicker : public QCPAxisTicker {
 public:
  explicit CategoryTicker(QCPAxis* axis) : axis_(axis) {}
  void setLabels(QVector<QString> labels) { labels_ = std::move(labels); }

 protected:
  double getTickStep(const QCPRange& range) override {
    const QFontMetrics metrics(axis_->tickLabelFont());
    int widest = 0;
    for (const QString& label : labels_)
      for (const QString& line : label.split(QLatin1Char('\n')))
        widest = std::max(widest, metrics.horizontalAdvance(line));
    const double per_label = widest + metrics.horizontalAdvance(QStringLiteral("0"));
    // Ticks are made before the layout of this replot: the axis rect may still have an old width,
    // but the plot's own width is current and the margins change little.
    const QCPAxisRect* rect = axis_->axisRect();
    const int margins = rect->outerRect().width() - rect->width();
    const int width = std::max(60, axis_->parentPlot()->width() - std::max(0, margins));
    const double per_unit = width / std::max(1.0, range.size());
    double step = 1;
    while (step * per_unit < per_label && step < 1e6) step *= 2;
    return step;
  }
  int getSubTickCount(double /*step*/) override { return 0; }
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    const long long i = std::llround(tick);
    return i >= 0 && i < labels_.size() ? labels_[static_cast<qsizetype>(i)] : QString();
  }

 private:
  QCPAxis* axis_;
  QVector<QString> labels_;
};

QColor pale(QColor c) {
  c.setAlpha(70);
  return c;
}

QCPBars* addBars(QCustomPlot* plot) {
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setWidthType(QCPBars::wtPlotCoords);
  bars->setWidth(kBarWidth);
  bars->removeFromLegend();
  return bars;
}

// Run A's bars are pale and outlined, run B's solid.
void styleA(QCPBars* bars, const QColor& colour) {
  bars->setPen(QPen(colour.darker(120), 1.2));
  bars->setBrush(pale(colour));
}
void styleB(QCPBars* bars, const QBrush& brush, const QColor& colour) {
  bars->setPen(QPen(colour.darker(120), 1.0));
  bars->setBrush(brush);
}

// The legend's keys, in neutral grey: what pale and solid stand for.
void addKeys(QCustomPlot* plot, const profiler::RunComparison& c) {
  const QColor grey(0x70, 0x70, 0x70);
  auto* a = new QCPBars(plot->xAxis, plot->yAxis);
  styleA(a, grey);
  a->setName(QObject::tr("A: run %1").arg(static_cast<qint64>(c.a)));
  auto* b = new QCPBars(plot->xAxis, plot->yAxis);
  styleB(b, QBrush(grey), grey);
  b->setName(QObject::tr("B: run %1").arg(static_cast<qint64>(c.b)));
}

// A title row and a legend row above the bars: the legend never covers one.
void setUpPlot(QCustomPlot* plot, const QString& name) {
  plot->setObjectName(name);
  auto* title = new QCPTextElement(plot);
  styleBarChart(plot, kMinPlotHeight, title);
  plot->legend->setVisible(true);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot->legend->setWrap(2);
  plot->legend->setIconSize(18, 10);
  plot->legend->setColumnSpacing(16);
  plot->axisRect()->insetLayout()->take(plot->legend);
  plot->plotLayout()->insertRow(1);
  plot->plotLayout()->addElement(1, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(1, 0.001);
  plot->xAxis->setTicker(QSharedPointer<CategoryTicker>::create(plot->xAxis));
}

void setTitle(QCustomPlot* plot, const QString& text) {
  if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) title->setText(text);
}

void setLabels(QCustomPlot* plot, QVector<QString> labels) {
  if (auto ticker = plot->xAxis->ticker().dynamicCast<CategoryTicker>()) ticker->setLabels(std::move(labels));
}

void clear(QCustomPlot* plot) {
  plot->clearPlottables();
  plot->clearItems();
  setLabels(plot, {});
  plot->xAxis->setRange(0, 1);
  plot->yAxis->setRange(0, 1);
}

double shown(const profiler::ComparedValue& v, double x) {
  return v.unit == profiler::ComparedUnit::Share ? 100.0 * x : x;
}

QString changeText(const profiler::ComparedValue& v) {
  if (!v.a || !v.b) return {};
  return QString::fromStdString(v.unit == profiler::ComparedUnit::Share ? report::formatPointsDifference(*v.a, *v.b)
                                                                        : report::formatChange(*v.a, *v.b));
}

report::Phase phaseOf(const std::string& name) {
  static constexpr report::Phase kMeasured[profiler::kPhases] = {
      report::Phase::EmbeddingForward, report::Phase::EmbeddingBackward, report::Phase::AllToAll,
      report::Phase::ReplicaSync, report::Phase::Dense};
  for (int p = 0; p < profiler::kPhases; ++p)
    if (name == profiler::phaseName(p)) return kMeasured[p];
  return name == "step" ? report::Phase::Step : report::Phase::Other;
}

// "embedding fwd" -> "embedding\nfwd": two short lines fit a category.
QString categoryLabel(const std::string& name) {
  QString label = QString::fromStdString(name);
  const auto space = label.indexOf(QLatin1Char(' '));
  if (label.size() > 8 && space > 0) label[space] = QLatin1Char('\n');
  return label;
}

// Tick labels of matched ranks: the group rank when every rank is in one group.
QVector<QString> rankLabels(const profiler::RunComparison& c, QString& axis) {
  std::set<int> groups;
  for (const auto& v : c.ranks) groups.insert(v.group);
  QVector<QString> labels;
  for (const auto& v : c.ranks) {
    switch (c.matching) {
      case profiler::RankMatching::GroupAndGroupRank:
        labels.push_back(groups.size() == 1 ? QString::number(v.group_rank)
                                            : QStringLiteral("%1\u00b7%2").arg(v.group).arg(v.group_rank));
        break;
      case profiler::RankMatching::GroupRank:
        labels.push_back(QString::number(v.group_rank));
        break;
      case profiler::RankMatching::GlobalRank:
        labels.push_back(QString::number(v.a_rank >= 0 ? v.a_rank : v.b_rank));
        break;
    }
  }
  switch (c.matching) {
    case profiler::RankMatching::GroupAndGroupRank:
      axis = groups.size() == 1 ? QObject::tr("group rank (sharding group %1)").arg(*groups.begin())
                                : QObject::tr("sharding group \u00b7 group rank");
      break;
    case profiler::RankMatching::GroupRank:
      axis = QObject::tr("group rank");
      break;
    case profiler::RankMatching::GlobalRank:
      axis = QObject::tr("global rank");
      break;
  }
  return labels;
}

QString ratioText(const std::optional<double>& r) { return r ? QString::number(*r, 'f', 2) : QStringLiteral("n/a"); }

}  // namespace

ComparisonChart::ComparisonChart(QWidget* parent) : QWidget(parent), phases_(new QCustomPlot), ranks_(new QCustomPlot) {
  setObjectName(QStringLiteral("runsComparisonChart"));
  setUpPlot(phases_, QStringLiteral("comparisonPhasePlot"));
  setUpPlot(ranks_, QStringLiteral("comparisonRankPlot"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(phases_, 1);
  layout->addWidget(ranks_, 1);
  setComparison(nullptr);
}

void ComparisonChart::setComparison(const profiler::RunComparison* c) {
  clear(phases_);
  clear(ranks_);
  if (c == nullptr) {
    setTitle(phases_, tr("Step by phase: no comparison"));
    setTitle(ranks_, tr("Embedding load per rank: no comparison"));
  } else {
    drawPhases(*c);
    drawRanks(*c);
  }
  phases_->replot(QCustomPlot::rpQueuedReplot);
  ranks_->replot(QCustomPlot::rpQueuedReplot);
}

void ComparisonChart::drawPhases(const profiler::RunComparison& c) {
  addKeys(phases_, c);
  QVector<QString> labels;
  double top = 0.0;
  int x = 0;
  for (const profiler::ComparedValue& v : c.phases) {
    if (v.a.value_or(0.0) <= 0.0 && v.b.value_or(0.0) <= 0.0) continue;  // neither run spent time in it
    const report::Phase phase = phaseOf(v.name);
    auto* a = addBars(phases_);
    styleA(a, phaseColor(phase));
    auto* b = addBars(phases_);
    styleB(b, phaseBrush(phase), phaseColor(phase));
    double high = 0.0;
    if (v.a) {
      a->addData(x - kOffset, shown(v, *v.a));
      high = shown(v, *v.a);
    }
    if (v.b) {
      b->addData(x + kOffset, shown(v, *v.b));
      high = std::max(high, shown(v, *v.b));
    }
    auto* change = new QCPItemText(phases_);
    change->position->setCoords(x, high);
    change->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    change->setPadding(QMargins(0, 0, 0, 2));
    change->setText(changeText(v));
    top = std::max(top, high);
    labels.push_back(categoryLabel(v.name));
    ++x;
  }
  setLabels(phases_, labels);
  phases_->xAxis->setRange(-0.6, std::max(0, x) - 0.4);
  phases_->yAxis->setRange(0, top > 0 ? top * 1.2 : 1.0);
  phases_->yAxis->setLabel(c.shares ? tr("share of the measured phases (%)") : tr("ms per step"));
  setTitle(phases_, c.shares ? tr("Step by phase, shares (label: B \u2212 A)") : tr("Step by phase (label: B vs A)"));
}

void ComparisonChart::drawRanks(const profiler::RunComparison& c) {
  addKeys(ranks_, c);
  const QColor colour = phaseColor(report::Phase::Embedding);
  auto* a = addBars(ranks_);
  styleA(a, colour);
  auto* b = addBars(ranks_);
  styleB(b, phaseBrush(report::Phase::Embedding), colour);
  double top = 0.0;
  for (std::size_t i = 0; i < c.ranks.size(); ++i) {
    const profiler::ComparedValue& v = c.ranks[i];
    const double x = static_cast<double>(i);
    if (v.a) {
      a->addData(x - kOffset, shown(v, *v.a));
      top = std::max(top, shown(v, *v.a));
    }
    if (v.b) {
      b->addData(x + kOffset, shown(v, *v.b));
      top = std::max(top, shown(v, *v.b));
    }
  }
  QString axis;
  setLabels(ranks_, rankLabels(c, axis));
  ranks_->xAxis->setLabel(axis);
  ranks_->xAxis->setRange(-0.6, static_cast<double>(c.ranks.size()) - 0.4);
  ranks_->yAxis->setRange(0, top > 0 ? top * 1.12 : 1.0);
  ranks_->yAxis->setLabel(c.shares ? tr("share of its group's work (%)") : tr("embedding ms per step"));
  const profiler::ComparedValue* overall = c.imbalance.empty() ? nullptr : &c.imbalance.front();
  setTitle(ranks_,
           tr("Embedding load per rank; max/mean A %1, B %2")
               .arg(ratioText(overall ? overall->a : std::nullopt), ratioText(overall ? overall->b : std::nullopt)));
}

}  // namespace shardscope::app
