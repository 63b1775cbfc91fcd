// The Timeline page driven as a user drives it, offscreen, on a generated
// run: the whole run first, zoom/pan by wheel, keys and drag with the zoom
// history, a click on a collective (details, the call on every rank with the
// straggler last), search next/previous, a range's totals, alignment on a
// step, the straggler strip, the PNG of the view; and a screenshot of the page.
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/profiler/analysis/timeline_window.h"
#include "timeline_fixture.h"
#include "timeline_page.h"
#include "timeline_view.h"

using namespace shardscope;
using app::TimelinePage;
using app::TimelineView;

namespace {

// Waits until the view shows an answer for exactly its current window.
bool waitForWindow(TimelinePage& page) {
  return QTest::qWaitFor(
      [&page] {
        const auto* w = page.view()->shownWindow();
        const auto [t0, t1] = page.view()->window();
        return w && w->t0_ns == t0 && w->t1_ns == t1 && page.queries()->idle();
      },
      10'000);
}

// The first item of `kind` on (rank, stream) in the shown window.
const profiler::TimelineItem* findItem(const TimelinePage& page, int rank, int stream, std::string_view kind) {
  const auto* w = page.view()->shownWindow();
  const auto* strings = page.view()->strings();
  if (!w || !strings) return nullptr;
  for (const auto& row : w->rows) {
    if (row.rank != rank || row.stream != stream) continue;
    for (const auto& item : row.items) {
      if (strings->at(item.kind) == kind) return &item;
    }
  }
  return nullptr;
}

// The viewport point of the middle of `item` on the lane of (rank, stream).
QPoint pointOf(const TimelineView& view, const profiler::TimelineItem& item, int rank, int stream) {
  const auto& lanes = view.lanes();
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].rank == rank && (lanes[i].whole_rank || lanes[i].stream == stream)) {
      const double mid = (view.columnOf(item.start_ns, rank) + view.columnOf(item.end_ns, rank)) / 2;
      return {view.dataLeft() + static_cast<int>(mid), view.laneTop(i) + view.laneHeight(i) / 2};
    }
  }
  return {};
}

}  // namespace

class TstTimelinePage : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    store_ = dir_.filePath(QStringLiteral("runs.sqlite"));
    auto facts = testing::writeTimelineRun(store_.toStdString(), {});
    QVERIFY2(facts.ok(), facts.ok() ? "" : facts.error().message.c_str());
    facts_ = *facts;
  }

  void init() {
    page_ = std::make_unique<TimelinePage>();
    page_->resize(1280, 800);
    page_->show();
    QVERIFY(QTest::qWaitForWindowExposed(page_.get()));
    page_->setStorePath(store_);
    QSignalSpy shown(page_.get(), &TimelinePage::runShown);
    QSignalSpy inspected(page_.get(), &TimelinePage::inspectionReady);
    page_->showRun(static_cast<qint64>(facts_.run));
    QVERIFY(shown.wait(10'000));
    QVERIFY(shown.front().at(1).toString().isEmpty());
    QVERIFY(inspected.count() > 0 || inspected.wait(10'000));
    QVERIFY2(waitForWindow(*page_), qPrintable(page_->messageText()));
  }

  void cleanup() { page_.reset(); }

  void wholeRunFirst() {
    const TimelineView* view = page_->view();
    QCOMPARE(view->lanes().size(), std::size_t{4});  // one collapsed lane per rank
    const auto [t0, t1] = view->window();
    QVERIFY(t0 <= facts_.t0_ns && t1 >= facts_.t1_ns);
    const auto* w = view->shownWindow();
    QCOMPARE(w->span_count, facts_.spans);
    // At the whole run the per-table spans are narrower than a pixel: density blocks.
    std::size_t blocks = 0;
    for (const auto& row : w->rows) blocks += row.blocks.size();
    QVERIFY(blocks > 0);
    QCOMPARE(page_->steps().size(), std::size_t{4 * 30});
    QVERIFY(page_->calls() != nullptr);
    QCOMPARE(page_->calls()->calls().size(), std::size_t{30 * 5});
    QVERIFY(page_->detailsText().contains(QStringLiteral("Click a span")));
    // The same run shown again (its window unchanged) is read and drawn again.
    QSignalSpy windows(page_.get(), &TimelinePage::windowShown);
    page_->showRun(static_cast<qint64>(facts_.run));
    QVERIFY(windows.wait(10'000));
    QVERIFY(waitForWindow(*page_));
    QCOMPARE(page_->view()->shownWindow()->span_count, facts_.spans);
  }

  void zoomPanAndHistory() {
    TimelineView* view = page_->view();
    const auto whole = view->window();
    // Wheel: one notch in at the middle.
    const QPoint mid(view->dataLeft() + view->dataWidth() / 2, TimelineView::kRulerHeight + 40);
    QWheelEvent wheel(mid, view->viewport()->mapToGlobal(mid), {}, {0, 120}, Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(view->viewport(), &wheel);
    auto zoomed = view->window();
    QVERIFY(zoomed.second - zoomed.first < whole.second - whole.first);
    QVERIFY(waitForWindow(*page_));
    // Keys: W zooms in, A pans towards earlier times, D back.
    view->setFocus();
    QTest::keyClick(view, Qt::Key_W);
    const auto keyed = view->window();
    QVERIFY(keyed.second - keyed.first < zoomed.second - zoomed.first);
    QTest::keyClick(view, Qt::Key_A);
    QVERIFY(view->window().first < keyed.first);
    QCOMPARE(view->window().second - view->window().first, keyed.second - keyed.first);
    QTest::keyClick(view, Qt::Key_D);
    QCOMPARE(view->window(), keyed);
    // Drag 100 px right: earlier times come into view by 100 px worth.
    const double ns_per_px = static_cast<double>(keyed.second - keyed.first) / view->dataWidth();
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, mid);
    QTest::mouseMove(view->viewport(), mid + QPoint(50, 0));
    QTest::mouseMove(view->viewport(), mid + QPoint(100, 0));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, mid + QPoint(100, 0));
    QVERIFY(std::abs(static_cast<double>(keyed.first - view->window().first) - 100 * ns_per_px) < 2 * ns_per_px);
    QVERIFY(waitForWindow(*page_));
    // History: back returns to the whole run, forward to where the gesture ended.
    const auto dragged = view->window();
    QVERIFY(view->canGoBack());
    view->goBack();
    QCOMPARE(view->window(), whole);
    QVERIFY(view->canGoForward());
    view->goForward();
    QCOMPARE(view->window(), dragged);
    QTest::keyClick(view, Qt::Key_0);
    QVERIFY(view->window().second - view->window().first >= whole.second - whole.first);
    QVERIFY(waitForWindow(*page_));
  }

  void clickCollectiveHighlightsTheCall() {
    page_->goToStep(3);  // the straggler (rank 2) computes slowly in steps 3, 10, 17, ...
    QVERIFY(waitForWindow(*page_));
    page_->view()->setExpanded(0, true);
    QVERIFY(waitForWindow(*page_));
    QTRY_VERIFY(findItem(*page_, 0, 1, "a2a_pooled") != nullptr);
    const auto item = *findItem(*page_, 0, 1, "a2a_pooled");
    QCOMPARE(item.step, std::int64_t{3});
    QSignalSpy details(page_.get(), &TimelinePage::detailsChanged);
    QTest::mouseClick(page_->view()->viewport(), Qt::LeftButton, {}, pointOf(*page_->view(), item, 0, 1));
    QVERIFY(details.count() > 0);
    const auto& selected = page_->view()->selected();
    QVERIFY(selected && !selected->block);
    QCOMPARE(selected->item.start_ns, item.start_ns);
    QVERIFY(page_->detailsText().contains(QStringLiteral("a2a_pooled")));
    const auto& call = page_->view()->highlight();
    QVERIFY(call.has_value());
    QCOMPARE(call->arrivals.size(), std::size_t{4});
    QCOMPARE(call->last_rank, 2);
    QVERIFY(call->last_by_ns > 0);
    QVERIFY(page_->detailsText().contains(QStringLiteral("(last)")));
    // Align on it: every rank's arrival at the same column.
    page_->setAlignment(TimelinePage::Alignment::SelectedCollective);
    QCOMPARE(page_->view()->offsets().size(), std::size_t{4});
    QVERIFY(waitForWindow(*page_));
    const double c0 = page_->view()->columnOf(call->arrivals[0].start_ns, call->arrivals[0].rank);
    for (const auto& a : call->arrivals) QVERIFY(std::abs(page_->view()->columnOf(a.start_ns, a.rank) - c0) < 0.5);
    QCOMPARE(page_->view()->shownWindow()->rows.empty(), false);
  }

  void searchNextAndPrevious() {
    page_->searchEdit()->setText(QStringLiteral("A2A_GRADS"));
    QSignalSpy details(page_.get(), &TimelinePage::detailsChanged);
    page_->findNext();
    QVERIFY(details.wait(10'000));
    const auto first = page_->view()->selected();
    QVERIFY(first && !first->block);
    QCOMPARE(QString::fromUtf8(page_->view()->strings()->at(first->item.name).data()), QStringLiteral("a2a_grads"));
    QCOMPARE(first->item.step, std::int64_t{0});
    page_->findNext();
    QVERIFY(details.wait(10'000));
    const auto second = page_->view()->selected();
    QVERIFY(second->item.start_ns > first->item.start_ns ||
            (second->item.start_ns == first->item.start_ns && second->rank > first->rank));
    page_->findPrevious();
    QVERIFY(details.wait(10'000));
    QCOMPARE(page_->view()->selected()->item.start_ns, first->item.start_ns);
    // The view follows the hit.
    const auto [t0, t1] = page_->view()->window();
    QVERIFY(first->item.start_ns >= t0 && first->item.end_ns <= t1);
    page_->searchEdit()->setText(QStringLiteral("no such span"));
    page_->findNext();
    QTRY_VERIFY(page_->messageText().contains(QStringLiteral("No more spans")));
  }

  void rangeTotalsPerRank() {
    page_->goToStep(5);
    QVERIFY(waitForWindow(*page_));
    TimelineView* view = page_->view();
    const int y = view->laneTop(0) + 5;
    QSignalSpy details(page_.get(), &TimelinePage::detailsChanged);
    QTest::mousePress(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, {view->dataLeft() + 10, y});
    QTest::mouseMove(view->viewport(), {view->dataLeft() + 300, y});
    QTest::mouseMove(view->viewport(), {view->dataLeft() + view->dataWidth() - 10, y});
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::ShiftModifier,
                        {view->dataLeft() + view->dataWidth() - 10, y});
    QVERIFY(view->range().has_value());
    QVERIFY(details.wait(10'000));
    const QString text = page_->detailsText();
    QVERIFY2(text.contains(QStringLiteral("embedding forward")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("all-to-all")));
    for (int r = 0; r < 4; ++r) QVERIFY(text.contains(QStringLiteral("<tr><td>%1</td>").arg(r)));
  }

  void alignOnStepAndStrip() {
    page_->stepBox()->setValue(4);
    page_->setAlignment(TimelinePage::Alignment::StepStart);
    const auto& offsets = page_->view()->offsets();
    QCOMPARE(offsets.size(), std::size_t{4});
    std::int64_t step_start[4] = {};
    for (const auto& s : page_->steps()) {
      if (s.step == 4) step_start[s.rank] = s.start_ns;
    }
    const std::int64_t first = *std::min_element(std::begin(step_start), std::end(step_start));
    for (int r = 0; r < 4; ++r) QCOMPARE(offsets[static_cast<std::size_t>(r)], step_start[r] - first);
    QVERIFY(offsets[3] > 0);  // higher ranks start later (longer host gaps)
    page_->goToStep(4);
    QVERIFY(waitForWindow(*page_));
    page_->setAlignment(TimelinePage::Alignment::None);
    QVERIFY(page_->view()->offsets().empty());
  }

  void pngOfTheView() {
    const QString png = dir_.filePath(QStringLiteral("view.png"));
    QVERIFY(page_->savePng(png));
    QImage image(png);
    QCOMPARE(image.size(), page_->view()->size());
    // Not blank: the lanes have coloured spans.
    QSet<QRgb> colours;
    const int y = page_->view()->viewport()->mapTo(page_->view(), QPoint(0, page_->view()->laneTop(0) + 9)).y();
    for (int x = TimelineView::kGutter; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 3);
  }

  void screenshot() {
    page_->goToStep(3);
    page_->view()->setExpanded(2, true);
    QVERIFY(waitForWindow(*page_));
    const auto* item = findItem(*page_, 2, 1, "a2a_pooled");
    QVERIFY(item);
    QTest::mouseClick(page_->view()->viewport(), Qt::LeftButton, {}, pointOf(*page_->view(), *item, 2, 1));
    QVERIFY(page_->view()->highlight().has_value());
    QDir().mkpath(QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots"));
    QVERIFY(page_->grab().save(QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_timeline_1280x800.png")));
    page_->goToStep(0);
    page_->view()->showWholeRun();
    QVERIFY(waitForWindow(*page_));
    QVERIFY(page_->grab().save(QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_timeline_whole_1280x800.png")));
  }

 private:
  QTemporaryDir dir_;
  QString store_;
  testing::TimelineRunFacts facts_;
  std::unique_ptr<TimelinePage> page_;
};

QTEST_MAIN(TstTimelinePage)
#include "test_timeline_page.moc"
