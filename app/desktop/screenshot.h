// Headless look at the GUI: render a top-level widget at a given size into a
// PNG (`shardscope --screenshot out.png`, and the screenshot test).
#pragma once

#include <QSize>
#include <QString>

#include "shardscope/core/result.h"

class QWidget;

namespace shardscope::app {

inline constexpr QSize kScreenshotSize{1600, 1000};

[[nodiscard]] core::Status saveScreenshot(QWidget& window, const QString& png_path, QSize size = kScreenshotSize);

}  // namespace shardscope::app
