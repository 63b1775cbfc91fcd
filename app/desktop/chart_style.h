// Styles the charts of several pages share.
#pragma once

#include <qcustomplot.h>

namespace shardscope::app {

// Viridis (perceptually uniform, readable in grey and for colour-blind
// users); NaN cells are transparent (blank: nothing there). Set it on a
// QCPColorMap after setColorScale, which replaces the map's gradient.
[[nodiscard]] QCPColorGradient viridisGradient();

// The look every bar chart of the desktop shares: the palette's base as
// background, no vertical grid or sub-ticks, short ticks, at least
// `min_height` pixels; with `title`, the title in bold in a row above the plot.
void styleBarChart(QCustomPlot* plot, int min_height, QCPTextElement* title = nullptr);

// Ten distinct series colours (Tableau 10, its grey swapped for cyan so that
// grey stays free for "other"); `i` wraps around.
inline constexpr int kSeriesColours = 10;
[[nodiscard]] QColor seriesColor(int i);

}  // namespace shardscope::app
