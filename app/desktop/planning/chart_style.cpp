#include "chart_style.h"

namespace shardscope::app {

namespace {
QColor rgb(std::uint32_t v) {
  return QColor(static_cast<int>((v >> 16) & 0xff), static_cast<int>((v >> 8) & 0xff), static_cast<int>(v & 0xff));
}
}  // namespace

QColor phaseColor(report::Phase phase) { return rgb(report::phaseStyle(phase).rgb); }

QColor phaseGround(report::Phase phase) {
  const report::PhaseStyle& style = report::phaseStyle(phase);
  const QColor colour = rgb(style.rgb);
  return style.hatch == report::Hatch::None ? colour : colour.lighter(135);
}

QBrush phaseBrush(report::Phase phase) {
  const report::PhaseStyle& style = report::phaseStyle(phase);
  const QColor colour = rgb(style.rgb);
  if (style.hatch == report::Hatch::None) return QBrush(colour);
  // A tile of the pale colour with darker diagonal strokes: readable printed in grey too.
  constexpr int kTile = 8;
  QPixmap tile(kTile, kTile);
  tile.fill(phaseGround(phase));
  QPainter p(&tile);
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(QPen(colour.darker(125), 1.6));
  p.drawLine(0, kTile, kTile, 0);
  p.drawLine(-kTile / 2, kTile / 2, kTile / 2, -kTile / 2);
  p.drawLine(kTile / 2, kTile + kTile / 2, kTile + kTile / 2, kTile / 2);
  if (style.hatch == report::Hatch::CrossDiagonal) {
    p.drawLine(0, 0, kTile, kTile);
  }
  p.end();
  return QBrush(tile);
}

QPixmap phaseSwatch(report::Phase phase, int width, int height) {
  QPixmap swatch(width, height);
  swatch.fill(Qt::transparent);
  QPainter p(&swatch);
  p.fillRect(swatch.rect(), phaseBrush(phase));
  p.setPen(phaseColor(phase).darker(130));
  p.drawRect(swatch.rect().adjusted(0, 0, -1, -1));
  return swatch;
}

QColor problemColor() { return rgb(report::kProblemRgb); }
QColor chosenColor() { return rgb(report::kChosenRgb); }
QColor quantityColor() { return {0x4c, 0x6a, 0x92}; }
QColor bestColor() { return rgb(report::kBestRgb); }

QColor seriesColor(int i) {
  static const QColor kColours[kSeriesColours] = {
      QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2),
      QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48), QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7),
      QColor(0x9c, 0x75, 0x5f), QColor(0x17, 0xbe, 0xcf)};
  return kColours[((i % kSeriesColours) + kSeriesColours) % kSeriesColours];
}

void styleBarChart(QCustomPlot* plot, int min_height, QCPTextElement* title) {
  plot->setBackground(plot->palette().base());
  plot->setMinimumHeight(min_height);
  plot->xAxis->grid()->setVisible(false);
  plot->xAxis->setSubTicks(false);
  plot->xAxis->setTickLength(0, 3);
  plot->yAxis->grid()->setSubGridVisible(false);
  if (title == nullptr) return;
  QFont bold = plot->font();
  bold.setBold(true);
  title->setFont(bold);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, title);
}

QCPColorGradient viridisGradient() {
  QCPColorGradient gradient;
  gradient.setColorStops({{0.0, QColor(0x44, 0x01, 0x54)},
                          {0.25, QColor(0x3b, 0x52, 0x8b)},
                          {0.5, QColor(0x21, 0x91, 0x8c)},
                          {0.75, QColor(0x5e, 0xc9, 0x62)},
                          {1.0, QColor(0xfd, 0xe7, 0x25)}});
  gradient.setNanHandling(QCPColorGradient::nhTransparent);
  return gradient;
}

}  // namespace shardscope::app
