// Lays out the hidden pages of a stack at the stack's size while the GUI is
// idle, one page per event-loop pass, so that switching to a page is a paint,
// not its first layout (a page's first resize replots every chart on it: 24 ms
// for the Plan page of a 4,096-GPU grid, on top of the paint). Runs after the
// stack is first shown and again after its size settles.
#pragma once

#include <QObject>
#include <QTimer>

class QStackedWidget;

namespace shardscope::app {

class PageWarmer : public QObject {
  Q_OBJECT

 public:
  explicit PageWarmer(QStackedWidget* stack);

  // Hidden pages not yet laid out at the stack's current size.
  [[nodiscard]] int pendingPages() const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void warmNext();

  QStackedWidget* stack_;
  QTimer settle_;  // restarts on each resize: warm only once the size holds
  QTimer step_;    // one page per tick, so input and paints get in between
};

}  // namespace shardscope::app
