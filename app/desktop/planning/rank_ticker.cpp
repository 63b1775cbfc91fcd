#include "rank_ticker.h"

#include <algorithm>
#include <cmath>

namespace shardscope::app {

double RankTicker::getTickStep(const QCPRange& range) {
  const QFontMetrics metrics(axis_->tickLabelFont());
  // Room for the widest label the range can have, plus a gap.
  const long long largest = ranks_.isEmpty()
                                ? static_cast<long long>(std::max(std::abs(range.lower), std::abs(range.upper)))
                                : *std::max_element(ranks_.begin(), ranks_.end());
  const QString widest = QString::number(largest);
  const double per_label = metrics.horizontalAdvance(widest) + metrics.horizontalAdvance(QStringLiteral("00"));
  const double pixels = std::max(60.0, axis_->parentPlot()->viewport().width() - static_cast<double>(reserved_));
  const double most = std::max(2.0, std::floor(pixels / per_label));
  double step = 1;
  while (range.size() / step > most) step *= 2;
  return step;
}

QString RankTicker::getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) {
  const long long i = std::llround(tick);
  if (ranks_.isEmpty()) return QString::number(i);
  return i >= 0 && i < ranks_.size() ? QString::number(ranks_[static_cast<qsizetype>(i)]) : QString();
}

}  // namespace shardscope::app
