#include "comparison_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "comparison_chart.h"
#include "shardscope/core/device.h"
#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString none() { return QStringLiteral("\u2014"); }

QString valueText(profiler::ComparedUnit unit, const std::optional<double>& v) {
  if (!v) return none();
  switch (unit) {
    case profiler::ComparedUnit::Milliseconds:
      return QLocale().toString(*v, 'f', 3);
    case profiler::ComparedUnit::Share:
      return QLocale().toString(*v * 100.0, 'f', 1) + QLatin1Char('%');
    case profiler::ComparedUnit::Ratio:
      return QLocale().toString(*v, 'f', 2);
  }
  return none();
}

QString differenceText(const profiler::ComparedValue& v) {
  const auto d = v.difference();
  if (!d) return none();
  switch (v.unit) {
    case profiler::ComparedUnit::Milliseconds:
      return (*d > 0 ? QStringLiteral("+") : QString()) + QLocale().toString(*d, 'f', 3);
    case profiler::ComparedUnit::Share:
      return qs(report::formatPointsDifference(*v.a, *v.b));
    case profiler::ComparedUnit::Ratio:
      return (*d > 0 ? QStringLiteral("+") : QString()) + QLocale().toString(*d, 'f', 2);
  }
  return none();
}

// Shares differ in percentage points (the B - A column); a relative change of a share would read as a time's.
QString changeText(const profiler::ComparedValue& v) {
  if (!v.a || !v.b || v.unit == profiler::ComparedUnit::Share) return none();
  const std::string text = report::formatChange(*v.a, *v.b);
  return text.empty() ? none() : qs(text);
}

QTableWidgetItem* cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
  return item;
}

QString rankFigure(const profiler::ComparedValue& v, profiler::RankMatching m) {
  QString name = qs(v.name);
  if (m == profiler::RankMatching::GlobalRank) return name;
  const auto rank = [](int r) { return r >= 0 ? QString::number(r) : none(); };
  return name + QObject::tr(" (A: rank %1, B: rank %2)").arg(rank(v.a_rank), rank(v.b_rank));
}

}  // namespace

ComparisonView::ComparisonView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      notes_(new QLabel),
      tabs_(new QTabWidget),
      chart_(new ComparisonChart),
      table_(new QTableWidget) {
  setObjectName(QStringLiteral("runsComparisonView"));
  title_->setObjectName(QStringLiteral("runsComparisonTitle"));
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notes_->setObjectName(QStringLiteral("runsComparisonNotes"));
  notes_->setWordWrap(true);
  notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setObjectName(QStringLiteral("runsComparison"));
  table_->setColumnCount(5);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setMinimumSectionSize(90);
  tabs_->setObjectName(QStringLiteral("runsComparisonTabs"));
  tabs_->addTab(chart_, tr("Chart"));
  tabs_->addTab(table_, tr("Table"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(notes_);
  layout->addWidget(tabs_, 1);
}

QString ComparisonView::titleText() const { return title_->text(); }
QString ComparisonView::notesText() const { return notes_->text(); }

void ComparisonView::setComparison(const profiler::RunComparison& c) {
  const auto device = [](const core::DeviceInfo& d) { return qs(core::shortDeviceName(d)); };
  title_->setText(
      tr("<b>A</b> = %1 on %2 &nbsp;\u00b7&nbsp; <b>B</b> = %3 on %4")
          .arg(qs(c.a_name).toHtmlEscaped(), device(c.a_device), qs(c.b_name).toHtmlEscaped(), device(c.b_device)));
  QStringList notes;
  if (c.shares) notes << qs(c.basis_note);
  const auto step = [](const std::optional<double>& ms) {
    return ms ? tr("%1 ms").arg(QLocale().toString(*ms, 'f', 3)) : tr("none");
  };
  QString steps = tr("Step time (per step the slowest rank's, median over steps): A %1, B %2")
                      .arg(step(c.a_step_ms), step(c.b_step_ms));
  if (c.shares)
    steps += tr(" (not compared: different devices)");
  else if (c.a_step_ms && c.b_step_ms && *c.a_step_ms > 0)
    steps += QStringLiteral(" (%1)").arg(qs(report::formatChange(*c.a_step_ms, *c.b_step_ms)));
  notes << steps << qs(c.matching_note);
  if (!c.warnings.empty()) notes << qs(c.warnings.front());
  notes_->setText(notes.join(QLatin1Char('\n')));
  notes_->setStyleSheet(c.shares ? QStringLiteral("color: #9a4a00;") : QString());
  chart_->setComparison(&c);
  fillTable(c);
}

void ComparisonView::fillTable(const profiler::RunComparison& c) {
  table_->clear();
  table_->setHorizontalHeaderLabels({tr("Figure"), tr("A"), tr("B"), tr("B \u2212 A"), tr("Change")});
  std::vector<std::pair<const profiler::ComparedValue*, QString>> rows;
  for (const auto& v : c.phases) rows.emplace_back(&v, qs(v.name));
  for (const auto& v : c.imbalance) rows.emplace_back(&v, qs(v.name));
  for (const auto& v : c.ranks) rows.emplace_back(&v, rankFigure(v, c.matching));
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    const auto& [v, name] = rows[static_cast<std::size_t>(row)];
    table_->setItem(row, 0, cell(name, false));
    table_->setItem(row, 1, cell(valueText(v->unit, v->a), true));
    table_->setItem(row, 2, cell(valueText(v->unit, v->b), true));
    table_->setItem(row, 3, cell(differenceText(*v), true));
    table_->setItem(row, 4, cell(changeText(*v), true));
  }
}

}  // namespace shardscope::app
