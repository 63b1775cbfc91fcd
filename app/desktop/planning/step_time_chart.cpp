#include "step_time_chart.h"

#include <algorithm>

#include "chart_style.h"
#include "grid_tick_labels.h"
#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

struct Part {
  report::Phase phase;
  const char* name;
};
constexpr Part kParts[4] = {{report::Phase::Embedding, "embedding"},
                            {report::Phase::AllToAll, "all-to-all"},
                            {report::Phase::ReplicaSync, "replica sync (all-reduce)"},
                            {report::Phase::Dense, "dense (+ dense all-reduce)"}};

bool partCalibrated(const report::CalibratedFigures& c, int part) {
  const bool flags[4] = {c.embedding, c.all_to_all, c.replica_sync, c.dense};
  return flags[part];
}

QString msText(double ms) { return QString::number(ms, 'f', ms >= 100 ? 0 : ms >= 10 ? 1 : 2); }

}  // namespace

StepTimeChart::StepTimeChart(QWidget* parent)
    : QCustomPlot(parent), chosen_(new QCPItemRect(this)), title_(new QCPTextElement(this)) {
  setObjectName(QStringLiteral("stepPlot"));
  styleBarChart(this, 240, title_);
  for (const Part& part : kParts) {
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setName(QString::fromLatin1(part.name));
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setWidth(0.7);
    bars->setPen(QPen(phaseColor(part.phase).darker(140), 0.6));
    bars->setBrush(phaseBrush(part.phase));
    if (!parts_.empty()) bars->moveAbove(parts_.back());
    parts_.push_back(bars);
  }
  // The legend in a row above the bars: it never covers one.
  legend->setVisible(true);
  legend->setBorderPen(Qt::NoPen);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(static_cast<int>(parts_.size()));
  legend->setIconSize(14, 10);
  axisRect()->insetLayout()->take(legend);
  plotLayout()->insertRow(1);
  plotLayout()->addElement(1, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  // The chosen grid: an outline in the chosen colour, never the "does not fit" hue.
  chosen_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
  chosen_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
  chosen_->setPen(QPen(chosenColor(), 2.0, Qt::DashLine));
  chosen_->setBrush(QColor(chosenColor().red(), chosenColor().green(), chosenColor().blue(), 14));
  chosen_->setSelectable(false);
  chosen_->setVisible(false);
  ticks_ = new GridTickLabels(this, tr("fitting grids"));
  connect(this, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable* plottable, int index, QMouseEvent*) {
    auto* bars = qobject_cast<QCPBars*>(plottable);
    if (bars == nullptr || index < 0 || index >= bars->dataCount()) return;
    const auto key = static_cast<std::size_t>((bars->data()->constBegin() + index)->key);
    if (key < keys_.size()) emit gridClicked(keys_[key]);
  });
}

bool StepTimeChart::ticksTurned() const { return ticks_->turned(); }

void StepTimeChart::setGrids(const planner::SweepResult& sweep, std::vector<int> keys,
                             report::CalibratedFigures calibrated, const QString& calibrated_on) {
  sweep_ = &sweep;
  keys_ = std::move(keys);
  calibrated_ = calibrated;
  calibrated_on_ = calibrated_on;
  fill();
}

void StepTimeChart::setScale(Scale scale) {
  if (scale == scale_) return;
  scale_ = scale;
  if (sweep_ != nullptr) fill();
}

void StepTimeChart::setChosen(int grid_index) {
  const auto it = std::find(keys_.begin(), keys_.end(), grid_index);
  chosen_key_ = grid_index >= 0 && it != keys_.end() ? static_cast<int>(it - keys_.begin()) : -1;
  chosen_->setVisible(chosen_key_ >= 0);
  if (chosen_key_ >= 0) {
    chosen_->topLeft->setCoords(chosen_key_ - 0.46, 0.0);
    chosen_->bottomRight->setCoords(chosen_key_ + 0.46, 1.0);
  }
  replot(rpQueuedReplot);
}

double StepTimeChart::bestBarPixels() const {
  if (best_key_ < 0) return 0.0;
  const double top = scale_ == Scale::Shares ? 100.0 : best_total_;
  return std::abs(yAxis->coordToPixel(0.0) - yAxis->coordToPixel(std::min(top, yAxis->range().upper)));
}

void StepTimeChart::fill() {
  for (QCPAbstractItem* item : labels_) removeItem(item);
  labels_.clear();
  QVector<double> k;
  QVector<double> parts[4];
  std::vector<double> totals;
  std::vector<const planner::GridResult*> grids;
  double best = 0.0;
  double top = 0.0;
  best_key_ = -1;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const planner::GridResult& g = sweep_->grids[static_cast<std::size_t>(keys_[i])];
    grids.push_back(&g);
    const double values[4] = {g.step.embedding_ms, g.step.all_to_all_ms, g.step.replica_sync_ms, g.step.dense_ms};
    const double total = values[0] + values[1] + values[2] + values[3];
    k.append(static_cast<double>(i));
    for (int p = 0; p < 4; ++p)
      parts[p].append(scale_ == Scale::Shares && total > 0 ? values[p] / total * 100.0 : values[p]);
    totals.push_back(total);
    if (&g == sweep_->best()) {
      best_key_ = static_cast<int>(i);
      best = total;
    }
    top = std::max(top, total);
  }
  best_total_ = best;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    parts_[p]->setData(k, parts[p], true);
    parts_[p]->setName(QString::fromLatin1(kParts[p].name) +
                       (partCalibrated(calibrated_, static_cast<int>(p)) ? QStringLiteral("\u2020") : QString()));
  }
  ticks_->setGrids(grids);
  // Zoomed: up to kZoom x the best step, so the best bar stands a fifth of the height at least.
  double axis_top = scale_ == Scale::Shares ? 100.0 : top;
  if (scale_ == Scale::ZoomedOnBest && best > 0 && top > kZoom * best) axis_top = kZoom * best;
  addTotals(totals, axis_top, best);
  const QString mark = calibrated_.any() ? QStringLiteral("\u2020") : QString();
  yAxis->setLabel(scale_ == Scale::Shares ? tr("share of the predicted step (%)")
                                          : tr("predicted step time (ms)%1").arg(mark));
  title_->setText(
      scale_ == Scale::ZoomedOnBest && clipped_ > 0
          ? tr("Step time per grid, zoomed on the best (%1 taller bars cut, their totals on top)").arg(clipped_)
      : scale_ == Scale::Shares ? tr("Share of each part in the step, step time on top")
                                : tr("Step time per grid"));
  if (calibrated_.any()) title_->setText(title_->text() + QStringLiteral("; \u2020 %1").arg(calibrated_on_));
  xAxis->setRange(-0.6, std::max(static_cast<double>(keys_.size()) - 0.4, 0.4));
  yAxis->setRange(0, axis_top > 0 ? axis_top * 1.22 : 1.0);
  setChosen(chosen_key_ >= 0 && static_cast<std::size_t>(chosen_key_) < keys_.size() ? keys_[chosen_key_] : -1);
}

// Totals above the bars (the step in ms; cut bars get theirs at the top with
// a break mark) and the best grid's label.
void StepTimeChart::addTotals(const std::vector<double>& totals, double top, double best) {
  clipped_ = 0;
  const bool room = totals.size() <= 24;
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const auto key = static_cast<double>(i);
    const double bar_top = scale_ == Scale::Shares ? 100.0 : totals[i];
    const bool cut = scale_ == Scale::ZoomedOnBest && bar_top > top * 1.22;
    const bool is_best = static_cast<int>(i) == best_key_;
    if (cut) {
      ++clipped_;
      // Two pale strokes across the bar just under the top: the axis is broken there.
      for (const double dy : {0.0, 0.05}) {
        auto* line = new QCPItemLine(this);
        line->start->setCoords(key - 0.38, top * (1.0 + dy));
        line->end->setCoords(key + 0.38, top * (1.04 + dy));
        line->setPen(QPen(palette().base().color(), 2.5));
        labels_.push_back(line);
      }
    }
    if (!room && !cut && !is_best) continue;
    auto* label = new QCPItemText(this);
    // A cut bar's total sits inside the top of the plot on a pale box; others stand on their bar.
    label->setPositionAlignment(Qt::AlignHCenter | (cut ? Qt::AlignTop : Qt::AlignBottom));
    label->position->setCoords(key, cut ? top * 1.21 : bar_top);
    label->setText(cut ? QStringLiteral("%1\u2191").arg(msText(totals[i])) : msText(totals[i]));
    label->setFont(small);
    label->setPadding(QMargins(2, 0, 2, 1));
    if (cut) label->setBrush(QColor(255, 255, 255, 215));
    if (is_best) {
      QFont bold = small;
      bold.setBold(true);
      label->setFont(bold);
      label->setColor(bestColor());
      label->setText(tr("best %1 ms").arg(msText(best)));
      label->setBrush(QColor(255, 255, 255, 215));
    }
    labels_.push_back(label);
  }
}

}  // namespace shardscope::app
