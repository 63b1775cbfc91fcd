// Styles the charts of several pages share.
#pragma once

#include <qcustomplot.h>

#include "shardscope/report/phase_style.h"

namespace shardscope::app {

// Viridis (perceptually uniform, readable in grey and for colour-blind
// users); NaN cells are transparent (blank: nothing there). Set it on a
// QCPColorMap after setColorScale, which replaces the map's gradient.
[[nodiscard]] QCPColorGradient viridisGradient();

// The look every bar chart of the desktop shares: the palette's base as
// background, no vertical grid or sub-ticks, short ticks, at least
// `min_height` pixels; with `title`, the title in bold in a row above the plot.
void styleBarChart(QCustomPlot* plot, int min_height, QCPTextElement* title = nullptr);

// The phase palette (report/phase_style.h) as Qt colours and brushes: the
// brush hatches the all-reduces over a pale fill of their colour, so replica
// sync and the dense all-reduce differ by pattern as well as hue.
[[nodiscard]] QColor phaseColor(report::Phase phase);
[[nodiscard]] QBrush phaseBrush(report::Phase phase);
// What text is written on over the brush: the colour, or a hatched brush's pale ground.
[[nodiscard]] QColor phaseGround(report::Phase phase);
// A legend-sized swatch of the brush (tables, labels).
[[nodiscard]] QPixmap phaseSwatch(report::Phase phase, int width = 14, int height = 10);
[[nodiscard]] QColor problemColor();  // does not fit, straggler, error
[[nodiscard]] QColor chosenColor();   // the chosen grid's outline
// A quantity that is not a phase (memory, imbalance): a muted blue that no phase uses.
[[nodiscard]] QColor quantityColor();
[[nodiscard]] QColor bestColor();  // the best grid's label

// Ten distinct series colours (Tableau 10, its grey swapped for cyan so that
// grey stays free for "other"); `i` wraps around.
inline constexpr int kSeriesColours = 10;
[[nodiscard]] QColor seriesColor(int i);

}  // namespace shardscope::app
