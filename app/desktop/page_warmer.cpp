#include "page_warmer.h"

#include <QEvent>
#include <QPixmap>
#include <QStackedWidget>

namespace shardscope::app {

namespace {

constexpr int kSettleMs = 400;  // after the last resize
constexpr int kStepMs = 30;     // between two pages

bool laidOutAt(const QWidget* page, QSize size) {
  return page->size() == size && !page->testAttribute(Qt::WA_PendingResizeEvent);
}

}  // namespace

PageWarmer::PageWarmer(QStackedWidget* stack) : QObject(stack), stack_(stack) {
  settle_.setSingleShot(true);
  settle_.setInterval(kSettleMs);
  step_.setSingleShot(true);
  step_.setInterval(kStepMs);
  connect(&settle_, &QTimer::timeout, this, &PageWarmer::warmNext);
  connect(&step_, &QTimer::timeout, this, &PageWarmer::warmNext);
  stack_->installEventFilter(this);
}

int PageWarmer::pendingPages() const {
  int pending = 0;
  for (int i = 0; i < stack_->count(); ++i) {
    const QWidget* page = stack_->widget(i);
    if (page != stack_->currentWidget() && !laidOutAt(page, stack_->size())) ++pending;
  }
  return pending;
}

bool PageWarmer::eventFilter(QObject* watched, QEvent* event) {
  if (watched == stack_ && (event->type() == QEvent::Resize || event->type() == QEvent::Show)) {
    step_.stop();
    settle_.start();
  }
  return QObject::eventFilter(watched, event);
}

void PageWarmer::warmNext() {
  if (!stack_->isVisible()) return;
  const QSize size = stack_->size();
  for (int i = 0; i < stack_->count(); ++i) {
    QWidget* page = stack_->widget(i);
    if (page == stack_->currentWidget() || laidOutAt(page, size)) continue;
    // A hidden widget is laid out when it is rendered: its pending resize
    // events go out and its layouts take the size. One pixel is painted.
    page->resize(size);
    QPixmap pixel(1, 1);
    page->render(&pixel, QPoint(), QRegion(0, 0, 1, 1));
    step_.start();
    return;
  }
}

}  // namespace shardscope::app
