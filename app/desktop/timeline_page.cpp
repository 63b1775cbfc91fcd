#include "timeline_page.h"

#include <QBuffer>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "shardscope/core/time_text.h"
#include "shardscope/profiler/analysis/timeline_details.h"
#include "chart_style.h"
#include "job_tracker.h"
#include "timeline_view.h"

namespace shardscope::app {

namespace st = core::store;
using profiler::SpanClass;

namespace {

QString html(const QString& s) { return s.toHtmlEscaped(); }

// A swatch of the phase's brush, inline in rich text.
QString swatchHtml(report::Phase phase) {
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  phaseSwatch(phase, 16, 11).save(&buffer, "PNG");
  return QStringLiteral("<img src=\"data:image/png;base64,%1\" width=16 height=11>")
      .arg(QString::fromLatin1(png.toBase64()));
}

QString legendHtml() {
  QString out;
  for (std::size_t c = 0; c < profiler::kSpanClassCount; ++c) {
    const auto cls = static_cast<SpanClass>(c);
    out += QStringLiteral("<nobr>%1&nbsp;%2</nobr>&nbsp;&nbsp; ")
               .arg(swatchHtml(phaseOf(cls)), html(QString::fromUtf8(profiler::toString(cls).data())));
  }
  out += QStringLiteral("<nobr><span style=\"color:#b0b0b0\">&#9633;</span>&nbsp;idle (no span)</nobr>");
  return out;
}

bool isCollectiveClass(SpanClass cls) {
  return cls == SpanClass::AllToAll || cls == SpanClass::ReplicaSync || cls == SpanClass::AllReduce;
}

// "12.3 µs", "4.56 ms", "1.2 s".
QString duration(std::int64_t ns) { return QString::fromStdString(core::formatDuration(std::chrono::nanoseconds(ns))); }

// A title in bold over a two-column table of the fields.
QString detailsHtml(const profiler::Details& d) {
  QString rows;
  for (const auto& f : d.fields) {
    rows += QStringLiteral("<tr><td>%1&nbsp;&nbsp;</td><td>%2</td></tr>")
                .arg(html(QString::fromStdString(f.label)), html(QString::fromStdString(f.value)));
  }
  return QStringLiteral("<b>%1</b><table>%2</table>").arg(html(QString::fromStdString(d.title)), rows);
}

}  // namespace

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent),
      queries_(new TimelineQueries(this)),
      view_(new TimelineView(this)),
      header_(new QLabel(tr("No run"), this)),
      back_(new QToolButton(this)),
      forward_(new QToolButton(this)),
      whole_(new QToolButton(this)),
      fit_(new QToolButton(this)),
      step_box_(new QSpinBox(this)),
      go_step_(new QPushButton(tr("Go to step"), this)),
      align_box_(new QComboBox(this)),
      search_(new QLineEdit(this)),
      prev_(new QToolButton(this)),
      next_(new QToolButton(this)),
      save_png_(new QPushButton(tr("Save PNG…"), this)),
      details_(new QLabel(this)),
      message_(new QLabel(this)),
      progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      summary_jobs_(new JobTracker(planningPool(), this)) {
  QFont bold = header_->font();
  bold.setBold(true);
  header_->setFont(bold);
  back_->setText(tr("◀ Back"));
  back_->setToolTip(tr("Previous zoom (Alt+Left, Backspace)"));
  forward_->setText(tr("Forward ▶"));
  forward_->setToolTip(tr("Next zoom (Alt+Right)"));
  whole_->setText(tr("Whole run"));
  whole_->setToolTip(tr("Show the whole run (0, Home)"));
  fit_->setText(tr("Fit"));
  fit_->setToolTip(tr("Fit the selected span or range (F)"));
  step_box_->setRange(0, 0);
  step_box_->setToolTip(tr("Step to show or align on"));
  align_box_->addItems({tr("Ranks as recorded"), tr("Align on step start"), tr("Align on selected collective")});
  search_->setPlaceholderText(tr("Find span by name"));
  search_->setClearButtonEnabled(true);
  prev_->setText(tr("◀"));
  prev_->setToolTip(tr("Previous match (Shift+Enter)"));
  next_->setText(tr("▶"));
  next_->setToolTip(tr("Next match (Enter)"));
  details_->setTextFormat(Qt::RichText);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  details_->setWordWrap(true);
  details_->setMinimumWidth(260);
  details_->setText(tr("<i>Click a span for its details; Shift+drag a range for its totals per rank.</i>"));
  message_->setWordWrap(true);
  progress_->setVisible(false);
  cancel_->setVisible(false);

  auto* tools = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{back_, forward_, whole_, fit_}) tools->addWidget(w);
  tools->addSpacing(12);
  tools->addWidget(step_box_);
  tools->addWidget(go_step_);
  tools->addWidget(align_box_);
  tools->addSpacing(12);
  tools->addWidget(search_, 1);
  tools->addWidget(prev_);
  tools->addWidget(next_);
  tools->addWidget(save_png_);
  auto* legend = new QLabel(legendHtml(), this);
  legend->setTextFormat(Qt::RichText);
  legend->setWordWrap(true);
  auto* status = new QHBoxLayout;
  status->addWidget(message_, 1);
  status->addWidget(progress_);
  status->addWidget(cancel_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(view_);
  split->addWidget(details_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setCollapsible(0, false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);
  layout->addLayout(tools);
  layout->addWidget(legend);
  layout->addWidget(split, 1);
  layout->addLayout(status);

  connectSignals();
  updateButtons();
}

TimelinePage::~TimelinePage() = default;

void TimelinePage::connectSignals() {
  connect(queries_, &TimelineQueries::opened, this, &TimelinePage::onOpened);
  connect(queries_, &TimelineQueries::failed, this, [this](const QString& m) {
    showMessage(m, true);
    progress_->setVisible(false);
    cancel_->setVisible(false);
  });
  connect(queries_, &TimelineQueries::progress, this, [this](int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
  });
  connect(queries_, &TimelineQueries::windowReady, this,
          [this](quint64 generation, std::shared_ptr<const profiler::TimelineWindow> window, qint64 us) {
            last_query_us_ = us;
            view_->setWindowAnswer(std::move(window));
            emit windowShown(generation);
          });
  connect(view_, &TimelineView::windowRequested, queries_, &TimelineQueries::requestWindow);
  connect(view_, &TimelineView::spanClicked, this, &TimelinePage::onSpanClicked);
  connect(view_, &TimelineView::rangeSelected, this, &TimelinePage::onRangeSelected);
  connect(view_, &TimelineView::selectionCleared, this, [this] {
    selected_call_.reset();
    details_->setText(tr("<i>Nothing selected.</i>"));
    emit detailsChanged();
  });
  connect(view_, &TimelineView::viewChanged, this, &TimelinePage::updateButtons);
  connect(back_, &QToolButton::clicked, view_, &TimelineView::goBack);
  connect(forward_, &QToolButton::clicked, view_, &TimelineView::goForward);
  connect(whole_, &QToolButton::clicked, view_, &TimelineView::showWholeRun);
  connect(fit_, &QToolButton::clicked, view_, &TimelineView::fitSelection);
  connect(go_step_, &QPushButton::clicked, this, [this] { goToStep(step_box_->value()); });
  connect(align_box_, &QComboBox::activated, this, [this](int index) { setAlignment(static_cast<Alignment>(index)); });
  connect(search_, &QLineEdit::returnPressed, this, &TimelinePage::findNext);
  connect(next_, &QToolButton::clicked, this, &TimelinePage::findNext);
  connect(prev_, &QToolButton::clicked, this, &TimelinePage::findPrevious);
  connect(summary_jobs_, &JobTracker::progress, this, [this](quint64, int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
  });
  connect(summary_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    progress_->setVisible(false);
    cancel_->setVisible(false);
    showMessage(tr("Far zoom reads every span (summaries not stored: %1)").arg(message), false);
  });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    queries_->cancelTasks();
    summary_jobs_->cancel();
    progress_->setVisible(false);
    cancel_->setVisible(false);
    showMessage(tr("Cancelled."), false);
  });
  connect(save_png_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save timeline as PNG"), {}, tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!savePng(path)) showMessage(tr("Could not write %1").arg(path), true);
  });
}

void TimelinePage::setStorePath(const QString& path) { store_path_ = path; }

void TimelinePage::showRun(qint64 run) {
  run_ = run;
  summary_jobs_->supersede();
  progress_->setVisible(false);
  cancel_->setVisible(false);
  calls_.reset();
  steps_.clear();
  selected_call_.reset();
  alignment_ = Alignment::None;
  align_box_->setCurrentIndex(0);
  header_->setText(tr("Run %1: loading…").arg(run));
  showMessage({}, false);
  queries_->open(store_path_, run);
}

void TimelinePage::onOpened(const TimelineOverview& overview) {
  overview_ = overview;
  const auto& r = overview.run;
  QString title = tr("Run %1 · %2").arg(static_cast<qint64>(r.id)).arg(QString::fromUtf8(st::toText(r.kind).data()));
  if (!r.label.empty()) title += QStringLiteral(" · ") + QString::fromStdString(r.label);
  title += tr(" · %n rank(s)", nullptr, static_cast<int>(overview.ranks.size()));
  title +=
      tr(" · %1 spans · %2")
          .arg(QLocale().toString(static_cast<qlonglong>(overview.spans)), duration(overview.t1_ns - overview.t0_ns));
  header_->setText(title);
  view_->setStrings(overview.strings);
  view_->setRun(overview.ranks, overview.t0_ns, overview.t1_ns);
  if (overview.ranks.empty()) showMessage(tr("This run has no spans to show."), false);
  if (!overview.summaries && overview.spans > profiler::kTimelineSummaryMinSpans) buildSummaries();
  loadInspection();
  emit runShown(run_, {});
}

void TimelinePage::buildSummaries() {
  // A run recorded before summaries existed (or too small then): build them
  // once, so far zoom stops reading every span. Without write access the
  // view keeps reading spans, which is correct, only slower.
  showMessage(tr("Summarising %1 spans for far zoom (once per run)…")
                  .arg(QLocale().toString(static_cast<qlonglong>(overview_.spans))),
              false);
  progress_->setVisible(true);
  progress_->setRange(0, 0);
  cancel_->setVisible(true);
  const std::string path = store_path_.toStdString();
  const auto run = static_cast<st::RunId>(run_);
  // On the planning pool, not the page's worker: windows keep being answered (from spans) meanwhile.
  summary_jobs_->start(
      [path, run](JobContext& job) {
        return profiler::buildTimelineSummariesIfLarge(
            path, run, job.cancelFlag(), [&job](int done, int total) { job.reportProgress(done, total); });
      },
      [this](bool built) {
        progress_->setVisible(false);
        cancel_->setVisible(false);
        overview_.summaries = built;
        showMessage(built ? tr("Summaries stored: far zoom is fast from now on.") : QString(), false);
        view_->refresh();
      });
}

void TimelinePage::loadInspection() {
  queries_->run<std::shared_ptr<const profiler::CollectiveCalls>>(
      [](const TimelineContext& c) -> core::Result<std::shared_ptr<const profiler::CollectiveCalls>> {
        auto calls = profiler::CollectiveCalls::load(c.store, c.run);
        if (!calls) return calls.error();
        return std::make_shared<const profiler::CollectiveCalls>(std::move(*calls));
      },
      [this](core::Result<std::shared_ptr<const profiler::CollectiveCalls>> calls) {
        if (!calls) {
          showMessage(tr("Collective calls: %1").arg(QString::fromStdString(calls.error().message)), true);
          return;
        }
        calls_ = std::move(*calls);
        view_->setStragglerMarks(profiler::stragglerMarks(*calls_));
      });
  queries_->run<std::vector<profiler::StepStart>>(
      [](const TimelineContext& c) { return profiler::stepStarts(c.store, c.strings, c.run); },
      [this](core::Result<std::vector<profiler::StepStart>> steps) {
        if (!steps) {
          showMessage(tr("Steps: %1").arg(QString::fromStdString(steps.error().message)), true);
          return;
        }
        steps_ = std::move(*steps);
        view_->setSteps(steps_);
        std::int64_t lo = std::numeric_limits<std::int64_t>::max();
        std::int64_t hi = -1;
        for (const auto& s : steps_) {
          lo = std::min(lo, s.step);
          hi = std::max(hi, s.step);
        }
        if (hi >= 0) step_box_->setRange(static_cast<int>(lo), static_cast<int>(hi));
        updateButtons();
        emit inspectionReady();
      });
}

QString TimelinePage::rel(std::int64_t t_ns) const { return duration(t_ns - overview_.t0_ns); }

void TimelinePage::goToStep(qint64 step) {
  std::int64_t a = std::numeric_limits<std::int64_t>::max();
  std::int64_t b = std::numeric_limits<std::int64_t>::min();
  const auto& offsets = view_->offsets();
  const auto& ranks = overview_.ranks;
  for (const auto& s : steps_) {
    if (s.step != step) continue;
    std::int64_t off = 0;
    if (!offsets.empty()) {
      const auto it = std::lower_bound(ranks.begin(), ranks.end(), s.rank);
      if (it != ranks.end() && *it == s.rank) off = offsets[static_cast<std::size_t>(it - ranks.begin())];
    }
    a = std::min(a, s.start_ns - off);
    b = std::max(b, s.end_ns - off);
  }
  if (a > b) {
    showMessage(tr("No rank recorded step %1.").arg(step), true);
    return;
  }
  step_box_->setValue(static_cast<int>(step));
  const std::int64_t pad = std::max<std::int64_t>((b - a) / 20, 1000);
  view_->navigateTo(a - pad, b + pad);
  if (alignment_ == Alignment::StepStart) applyAlignment();
}

void TimelinePage::setAlignment(Alignment alignment) {
  alignment_ = alignment;
  align_box_->setCurrentIndex(static_cast<int>(alignment));
  applyAlignment();
}

void TimelinePage::applyAlignment() {
  const auto& ranks = overview_.ranks;
  std::vector<std::int64_t> starts(ranks.size(), std::numeric_limits<std::int64_t>::min());
  auto put = [&](int rank, std::int64_t t) {
    const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
    if (it != ranks.end() && *it == rank) starts[static_cast<std::size_t>(it - ranks.begin())] = t;
  };
  if (alignment_ == Alignment::StepStart) {
    for (const auto& s : steps_) {
      if (s.step == step_box_->value()) put(s.rank, s.start_ns);
    }
  } else if (alignment_ == Alignment::SelectedCollective) {
    if (!selected_call_ || !calls_) {
      showMessage(tr("Select a collective span first (click an all-to-all, all-reduce or sync)."), true);
      view_->setOffsets({});
      return;
    }
    for (const auto& a : calls_->calls()[*selected_call_].arrivals) put(a.rank, a.start_ns);
  }
  if (alignment_ == Alignment::None) {
    view_->setOffsets({});
    return;
  }
  std::int64_t ref = std::numeric_limits<std::int64_t>::max();
  for (const std::int64_t t : starts) {
    if (t != std::numeric_limits<std::int64_t>::min()) ref = std::min(ref, t);
  }
  std::vector<std::int64_t> offsets(ranks.size(), 0);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (starts[i] != std::numeric_limits<std::int64_t>::min()) offsets[i] = starts[i] - ref;
  }
  view_->setOffsets(std::move(offsets));
  showMessage(alignment_ == Alignment::StepStart ? tr("Ranks aligned on the start of step %1.").arg(step_box_->value())
                                                 : tr("Ranks aligned on the selected collective's arrivals."),
              false);
}

void TimelinePage::onSpanClicked(const TimelineHit& hit) {
  showSpanDetails(hit);
  selected_call_.reset();
  view_->setHighlight(std::nullopt);
  if (!hit.block && isCollectiveClass(hit.item.cls) && calls_) {
    const std::int64_t mid = hit.item.start_ns + (hit.item.end_ns - hit.item.start_ns) / 2;
    if (const auto index = calls_->callAt(hit.rank, mid)) showCall(*index);
  }
  if (alignment_ == Alignment::SelectedCollective && selected_call_) applyAlignment();
}

void TimelinePage::showSpanDetails(const TimelineHit& hit) {
  QString out;
  if (hit.block) {
    out = detailsHtml(profiler::blockDetails(hit.density, hit.rank, hit.stream, overview_.t0_ns)) +
          tr("<i>Each narrower than a pixel: zoom in to see them one by one.</i>");
  } else {
    const st::StringTable none;
    const auto* strings = view_->strings();
    out =
        detailsHtml(profiler::spanDetails(hit.item, hit.rank, hit.stream, overview_.t0_ns, strings ? *strings : none));
  }
  details_->setText(out);
  emit detailsChanged();
}

void TimelinePage::showCall(std::size_t index) {
  selected_call_ = index;
  const auto& call = calls_->calls()[index];
  view_->setHighlight(call);
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (const auto& a : call.arrivals) first = std::min(first, a.start_ns);
  QString rows;
  for (const auto& a : call.arrivals) {
    rows +=
        QStringLiteral("<tr><td>%1%2</td><td align=right>+%3</td><td align=right>%4</td><td align=right>%5</td></tr>")
            .arg(a.rank)
            .arg(a.rank == call.last_rank && call.arrivals.size() > 1 ? tr(" (last)") : QString())
            .arg(duration(a.start_ns - first), duration(a.wait_ns), duration(a.end_ns - a.start_ns));
  }
  details_->setText(
      details_->text() + QStringLiteral("<hr>") + detailsHtml(profiler::callDetails(call)) +
      tr("<table><tr><th>rank&nbsp;</th><th>arrival</th><th>wait</th><th>in call</th></tr>%1</table>").arg(rows));
  emit detailsChanged();
}

void TimelinePage::onRangeSelected(std::int64_t t0_ns, std::int64_t t1_ns) {
  selected_call_.reset();
  view_->setHighlight(std::nullopt);
  details_->setText(tr("<i>Totals of %1 … %2: reading…</i>").arg(rel(t0_ns), rel(t1_ns)));
  progress_->setVisible(true);
  progress_->setRange(0, 0);
  cancel_->setVisible(true);
  const std::vector<int> ranks = overview_.ranks;
  const std::vector<std::int64_t> offsets = view_->offsets();
  queries_->run<std::vector<profiler::RangeTotals>>(
      [ranks, offsets, t0_ns, t1_ns](const TimelineContext& c) {
        return profiler::rangeTotals(c.store, c.strings, c.run, ranks, t0_ns, t1_ns, offsets, c.cancel);
      },
      [this, t0_ns, t1_ns](core::Result<std::vector<profiler::RangeTotals>> totals) {
        progress_->setVisible(false);
        cancel_->setVisible(false);
        if (!totals) {
          details_->setText(html(QString::fromStdString(totals.error().message)));
          emit detailsChanged();
          return;
        }
        std::array<bool, profiler::kSpanClassCount> used{};
        for (const auto& r : *totals) {
          for (std::size_t c = 0; c < used.size(); ++c) used[c] = used[c] || r.ns[c] > 0;
        }
        QString head = QStringLiteral("<tr><th>rank</th>");
        for (std::size_t c = 0; c < used.size(); ++c) {
          if (used[c])
            head += QStringLiteral("<th>%1</th>")
                        .arg(html(QString::fromUtf8(profiler::toString(static_cast<SpanClass>(c)).data())));
        }
        QString rows;
        for (const auto& r : *totals) {
          rows += QStringLiteral("<tr><td>%1</td>").arg(r.rank);
          for (std::size_t c = 0; c < used.size(); ++c) {
            if (used[c]) rows += QStringLiteral("<td align=right>%1</td>").arg(duration(r.ns[c]));
          }
          rows += QStringLiteral("</tr>");
        }
        details_->setText(tr("<b>%1 … %2</b> (%3): time per class<table>%4</tr>%5</table>")
                              .arg(rel(t0_ns), rel(t1_ns), duration(t1_ns - t0_ns), head, rows));
        emit detailsChanged();
      });
}

void TimelinePage::findNext() { find(profiler::SearchDirection::Forward); }
void TimelinePage::findPrevious() { find(profiler::SearchDirection::Backward); }

void TimelinePage::find(profiler::SearchDirection direction) {
  const std::string needle = search_->text().trimmed().toStdString();
  if (needle.empty() || overview_.ranks.empty()) return;
  const auto [v0, v1] = view_->window();
  std::int64_t from = direction == profiler::SearchDirection::Forward ? v0 - 1 : v1;
  if (const auto& sel = view_->selected(); sel && !sel->block) from = sel->item.start_ns;
  const std::vector<int> ranks = overview_.ranks;
  progress_->setVisible(true);
  progress_->setRange(0, 0);
  cancel_->setVisible(true);
  queries_->run<std::optional<TimelineHit>>(
      [ranks, needle, from, direction](const TimelineContext& c) -> core::Result<std::optional<TimelineHit>> {
        auto found = profiler::findSpan(c.store, c.strings, c.run, ranks, needle, from, direction, c.cancel);
        if (!found) return found.error();
        if (!*found) return std::optional<TimelineHit>{};
        const auto& s = (*found)->span;
        TimelineHit hit;
        hit.rank = s.rank;
        hit.stream = s.stream;
        hit.item = {s.start_ns, s.end_ns,     profiler::spanClassOf(c.strings.at(s.kind), c.strings.at(s.name)),
                    s.kind,     s.name,       s.step,
                    s.bytes,    s.correlation};
        if (c.strings.at(s.kind) == "step") hit.stream = profiler::kStepRowStream;
        return std::optional<TimelineHit>{hit};
      },
      [this, needle](core::Result<std::optional<TimelineHit>> found) {
        progress_->setVisible(false);
        cancel_->setVisible(false);
        if (!found) {
          showMessage(QString::fromStdString(found.error().message), true);
          return;
        }
        if (!*found) {
          showMessage(tr("No more spans named like \"%1\".").arg(QString::fromStdString(needle)), false);
          return;
        }
        const TimelineHit& hit = **found;
        view_->select(hit);
        const auto [w0, w1] = view_->window();
        const std::int64_t len = hit.item.end_ns - hit.item.start_ns;
        const std::int64_t width = std::max(w1 - w0, len + len / 5);
        const std::int64_t mid = hit.item.start_ns + len / 2;
        view_->navigateTo(mid - width / 2, mid - width / 2 + width);
        showSpanDetails(hit);
        showMessage(tr("Found on rank %1 at %2.").arg(hit.rank).arg(rel(hit.item.start_ns)), false);
      });
}

bool TimelinePage::savePng(const QString& path) const { return view_->grab().save(path, "PNG"); }

QString TimelinePage::detailsText() const { return details_->text(); }
QString TimelinePage::messageText() const { return message_->text(); }

void TimelinePage::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

void TimelinePage::updateButtons() {
  back_->setEnabled(view_->canGoBack());
  forward_->setEnabled(view_->canGoForward());
  const bool has_steps = !steps_.empty();
  step_box_->setEnabled(has_steps);
  go_step_->setEnabled(has_steps);
}

}  // namespace shardscope::app
