#include "screenshot.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QPixmap>
#include <QWidget>
#include <qcustomplot.h>

namespace shardscope::app {

core::Status saveScreenshot(QWidget& window, const QString& png_path, QSize size) {
  // Shown but never mapped on screen, so layouts and styles are applied as
  // they would be for a real window of this size.
  window.setAttribute(Qt::WA_DontShowOnScreen, true);
  window.resize(size);
  window.show();
  QApplication::processEvents();
  window.resize(size);  // a window manager hint may have changed it on show
  QApplication::processEvents();
  // Plots replot on the next event-loop pass (rpQueuedReplot); draw them now
  // at their final size so the image shows the data they hold.
  for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);

  const QPixmap pixmap = window.grab();
  if (pixmap.isNull()) return core::Error{"rendering the window gave an empty image"};
  const QFileInfo info(png_path);
  if (!QDir().mkpath(info.absolutePath())) {
    return core::Error{info.absolutePath().toStdString() + ": cannot create the folder"};
  }
  if (!pixmap.save(png_path, "PNG")) return core::Error{png_path.toStdString() + ": cannot write PNG"};
  return core::Ok{};
}

}  // namespace shardscope::app
