#include "chart_style.h"

namespace shardscope::app {

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
