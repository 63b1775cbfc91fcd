// Tick marks for a group-rank axis: whole ranks, a power-of-two apart (group
// sizes usually are), as far apart as the labels need. The axis width comes
// from the plot's viewport, which toPixmap sets before it lays out, so an
// exported image gets ticks for its own size.
#pragma once

#include <qcustomplot.h>

namespace shardscope::app {

class RankTicker : public QCPAxisTicker {
 public:
  // `reserved_pixels`: the viewport width that is not the axis (labels, legend, colour scale).
  RankTicker(QCPAxis* axis, int reserved_pixels) : axis_(axis), reserved_(reserved_pixels) {}
  void setReservedPixels(int pixels) { reserved_ = pixels; }
  // Bars at positions 0, 1, 2, ... that stand for these ranks (only the ranks a run measured):
  // tick i reads ranks[i]. Empty: a tick reads its own position.
  void setRanks(QVector<int> ranks) { ranks_ = std::move(ranks); }

 protected:
  double getTickStep(const QCPRange& range) override;
  int getSubTickCount(double /*step*/) override { return 0; }
  QString getTickLabel(double tick, const QLocale& locale, QChar format, int precision) override;

 private:
  QCPAxis* axis_;
  int reserved_;
  QVector<int> ranks_;
};

}  // namespace shardscope::app
