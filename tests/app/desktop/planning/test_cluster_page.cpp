// The Cluster page: preset picking, custom values and the network as
// undoable edits, the chosen grid kept valid, widgets following the project without making
// edits, the diagram's sharding-group colouring, and the cluster of this
// machine's GPUs.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QUndoStack>
#include <QtTest>

#include "cluster_diagram.h"
#include "cluster_page.h"
#include "project_document.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/rank_layout.h"

using shardscope::app::ClusterDiagram;
using shardscope::app::ClusterPage;
using shardscope::app::ProjectDocument;
namespace core = shardscope::core;
using Field = ClusterPage::Field;
using Toggle = ClusterPage::Toggle;

namespace {

constexpr std::uint64_t kGib = 1024ull * 1024 * 1024;

core::ClusterSpec preset(const char* name) { return core::clusterPreset(name).value(); }

int indexOf(QComboBox* combo, const QString& text_start) {
  for (int i = 0; i < combo->count(); ++i)
    if (combo->itemText(i).startsWith(text_start)) return i;
  return -1;
}

// What a user's pick in a combo emits (activated, not currentIndexChanged).
void pick(QComboBox* combo, const QString& text_start) {
  const int i = indexOf(combo, text_start);
  QVERIFY2(i >= 0, qPrintable(text_start));
  combo->setCurrentIndex(i);
  emit combo->activated(i);
}

// A value committed as the spin box's arrows or Enter commit it.
void commit(QDoubleSpinBox* spin, double value) { spin->setValue(value); }
void commit(QSpinBox* spin, int value) { spin->setValue(value); }

// The text of the form label in front of `field`.
QString labelOf(QWidget* field) {
  for (auto* form : field->window()->findChildren<QFormLayout*>())
    if (auto* label = qobject_cast<QLabel*>(form->labelForField(field))) return label->text();
  return {};
}

core::Project projectWith(core::ClusterSpec cluster) {
  core::Project p = core::defaultProject();
  p.cluster = std::move(cluster);
  return p;
}

}  // namespace

class TestClusterPage : public QObject {
  Q_OBJECT

 private slots:
  void pickersListThePresetsAndCustom();
  void defaultProjectShowsItsPreset();
  void choosingAGpuKindAppliesThePresetExactly();
  void choosingAWorldSizeAppliesThePresetExactly();
  void gpuKindOnCustomGeometryKeepsTheNodes();
  void typingCommitsOnEnterNotPerKeystroke();
  void customValueEditIsOneUndoableStep();
  void customValuesShowCustomAndRenameThePreset();
  void networkFieldsEditTheClustersNetwork();
  void networkTogglesEditTheClustersNetwork();
  void networkFollowsTheProject();
  void interNodeBandwidthIsPerNic();
  void gpuKindCarriesItsNetwork();
  void userNamedClusterKeepsItsName();
  void untouchedFieldDoesNotRoundTheProject();
  void typedHbmInGibShowsBackAsTyped();
  void gridThatNoLongerDividesNIsCleared();
  void gridThatStillDividesNIsKept();
  void constraintsOnVanishedRanksAreKept();
  void refreshAfterUndoRedoMakesNoEdits();
  void outsideEditUpdatesTheWidgets();
  void totalsFollowTheCluster();
  void diagramColoursStridedGroups();
  void localGpusFillTheClusterAsOneUndoableEdit();
  void localGpusFailureLeavesTheClusterAndSaysWhy();
  void diagramColoursContiguousGroups();
  void diagramWithoutGridHasNoGroups();
  void diagramDrawsAnOpenLayoutStrided();
  void diagramFollowsTheChosenGrid();
  void diagramDescribesPlacement_data();
  void diagramDescribesPlacement();
  void diagramFitsFourThousandGpus();
  void hoveringAGpuHighlightsItsGroup();
  void diagramTruncatesClustersTooLargeToDraw();
};

void TestClusterPage::pickersListThePresetsAndCustom() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QAbstractItemModelTester kinds(page.gpuKindCombo()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester sizes(page.worldSizeCombo()->model(),
                                 QAbstractItemModelTester::FailureReportingMode::QtTest);
  QComboBox* kind = page.gpuKindCombo();
  QCOMPARE(kind->count(), 5);
  QVERIFY(kind->itemText(0).startsWith(QStringLiteral("H100")));
  QVERIFY(kind->itemText(1).startsWith(QStringLiteral("H200")));
  QVERIFY(kind->itemText(2).startsWith(QStringLiteral("A100")));
  QVERIFY(kind->itemText(3).startsWith(QStringLiteral("B200")));
  QCOMPARE(kind->itemText(4), QStringLiteral("Custom"));
  QComboBox* size = page.worldSizeCombo();
  QCOMPARE(size->count(), 5);
  QVERIFY(size->itemText(0).startsWith(QStringLiteral("8 GPUs")));
  QVERIFY(size->itemText(3).startsWith(QStringLiteral("4,096 GPUs")));
  // "Custom" is shown, never picked.
  const auto* model = qobject_cast<const QStandardItemModel*>(kind->model());
  QVERIFY(model != nullptr);
  QVERIFY(!(model->item(4)->flags() & Qt::ItemIsEnabled));
}

void TestClusterPage::defaultProjectShowsItsPreset() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QCOMPARE(page.presetText(), QStringLiteral("h100x64"));
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("H100")));
  QVERIFY(page.worldSizeCombo()->currentText().startsWith(QStringLiteral("64 GPUs")));
  QCOMPARE(page.worldSizeText(), QStringLiteral("64 GPUs"));
  QCOMPARE(page.intField(Field::Nodes)->value(), 8);
  QCOMPARE(page.intField(Field::GpusPerNode)->value(), 8);
  QCOMPARE(page.doubleField(Field::HbmGib)->value(), 80.0);
  QCOMPARE(page.doubleField(Field::InterBandwidth)->value(), 50.0);
  QCOMPARE(doc.undoStack()->count(), 0);
}

void TestClusterPage::choosingAGpuKindAppliesThePresetExactly() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  const core::ClusterSpec before = doc.project().cluster;
  pick(page.gpuKindCombo(), QStringLiteral("H200"));
  QVERIFY(doc.project().cluster == preset("h200x64"));
  QCOMPARE(doc.undoStack()->count(), 1);
  QCOMPARE(page.presetText(), QStringLiteral("h200x64"));
  QCOMPARE(page.doubleField(Field::HbmGib)->value(), 140.0);
  doc.undoStack()->undo();
  QVERIFY(doc.project().cluster == before);
  QCOMPARE(page.presetText(), QStringLiteral("h100x64"));
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("H100")));
}

void TestClusterPage::choosingAWorldSizeAppliesThePresetExactly() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  const core::ClusterSpec before = doc.project().cluster;
  pick(page.worldSizeCombo(), QStringLiteral("4,096 GPUs"));
  QVERIFY(doc.project().cluster == preset("h100x4096"));
  QCOMPARE(page.worldSizeText(), QStringLiteral("4,096 GPUs"));
  QCOMPARE(page.intField(Field::Nodes)->value(), 512);
  QCOMPARE(doc.undoStack()->count(), 1);
  doc.undoStack()->undo();
  QVERIFY(doc.project().cluster == before);
  QCOMPARE(page.worldSizeText(), QStringLiteral("64 GPUs"));
}

void TestClusterPage::gpuKindOnCustomGeometryKeepsTheNodes() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  commit(page.intField(Field::Nodes), 3);
  QCOMPARE(page.worldSizeCombo()->currentText(), QStringLiteral("Custom"));
  pick(page.gpuKindCombo(), QStringLiteral("B200"));
  const core::ClusterSpec b200 = preset("b200x64");
  const core::ClusterSpec& now = doc.project().cluster;
  QCOMPARE(now.nodes, 3u);
  QCOMPARE(now.gpus_per_node, 8u);
  QVERIFY(now.gpu == b200.gpu);
  QVERIFY(now.intra_node == b200.intra_node);
  QVERIFY(now.inter_node == b200.inter_node);
  QVERIFY(now.network == b200.network);
  QCOMPARE(page.presetText(), QStringLiteral("Custom"));
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("B200")));
  QCOMPARE(doc.undoStack()->count(), 2);
}

void TestClusterPage::typingCommitsOnEnterNotPerKeystroke() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  page.show();
  QSpinBox* nodes = page.intField(Field::Nodes);
  nodes->setFocus();
  nodes->selectAll();
  QTest::keyClicks(nodes, QStringLiteral("16"));
  QCOMPARE(doc.undoStack()->count(), 0);
  QCOMPARE(doc.project().cluster.nodes, 8u);
  QTest::keyClick(nodes, Qt::Key_Return);
  QCOMPARE(doc.project().cluster.nodes, 16u);
  QCOMPARE(doc.undoStack()->count(), 1);
  QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Set nodes to 16"));
  QCOMPARE(page.worldSizeText(), QStringLiteral("128 GPUs"));
}

void TestClusterPage::customValueEditIsOneUndoableStep() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  commit(page.doubleField(Field::HbmGib), 96.0);
  QCOMPARE(doc.project().cluster.gpu.hbm_bytes, 96 * kGib);
  QCOMPARE(doc.undoStack()->count(), 1);
  QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Set HBM to 96 GiB"));
  commit(page.doubleField(Field::IntraLatency), 2.5);
  QCOMPARE(doc.project().cluster.intra_node.latency_us, 2.5);
  QCOMPARE(doc.undoStack()->text(1), QStringLiteral("Set intra-node latency to 2.5 \u00b5s"));
  doc.undoStack()->undo();
  doc.undoStack()->undo();
  QVERIFY(doc.project().cluster == preset("h100x64"));
  QCOMPARE(page.doubleField(Field::HbmGib)->value(), 80.0);
  QCOMPARE(page.doubleField(Field::IntraLatency)->value(), 3.0);
  doc.undoStack()->redo();
  QCOMPARE(doc.project().cluster.gpu.hbm_bytes, 96 * kGib);
  QCOMPARE(page.doubleField(Field::HbmGib)->value(), 96.0);
  QCOMPARE(doc.undoStack()->count(), 2);
}

void TestClusterPage::customValuesShowCustomAndRenameThePreset() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  commit(page.doubleField(Field::InterBandwidth), 25.0);
  QCOMPARE(page.presetText(), QStringLiteral("Custom"));
  QCOMPARE(page.gpuKindCombo()->currentText(), QStringLiteral("Custom"));
  QVERIFY(page.worldSizeCombo()->currentText().startsWith(QStringLiteral("64 GPUs")));
  QCOMPARE(doc.project().cluster.name, std::string("custom"));
  // Back to the preset's values: back to its name.
  commit(page.doubleField(Field::InterBandwidth), 50.0);
  QCOMPARE(page.presetText(), QStringLiteral("h100x64"));
  QVERIFY(doc.project().cluster == preset("h100x64"));
}

void TestClusterPage::networkFieldsEditTheClustersNetwork() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QCOMPARE(page.intField(Field::NicsPerNode)->value(), 8);
  QCOMPARE(page.doubleField(Field::CongestionPercent)->value(), 0.0);
  commit(page.intField(Field::NicsPerNode), 4);
  QCOMPARE(doc.project().cluster.network.nics_per_node, 4u);
  QCOMPARE(doc.project().cluster.nicsPerNode(), 4u);
  QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Set NICs per node to 4"));
  // 0 is one NIC per GPU, and says so.
  commit(page.intField(Field::NicsPerNode), 0);
  QCOMPARE(doc.project().cluster.network.nics_per_node, 0u);
  QCOMPARE(doc.project().cluster.nicsPerNode(), 8u);
  QCOMPARE(page.intField(Field::NicsPerNode)->text(), QStringLiteral("one per GPU"));
  QCOMPARE(doc.undoStack()->text(1), QStringLiteral("Set NICs per node to one per GPU"));
  // Congestion is typed in percent and stored as a fraction.
  commit(page.doubleField(Field::CongestionPercent), 12.5);
  QCOMPARE(doc.project().cluster.network.congestion_per_doubling, 0.125);
  QCOMPARE(doc.undoStack()->text(2), QStringLiteral("Set congestion to 12.5 % per doubling"));
  QCOMPARE(doc.undoStack()->count(), 3);
  QCOMPARE(page.presetText(), QStringLiteral("Custom"));
  QCOMPARE(page.gpuKindCombo()->currentText(), QStringLiteral("Custom"));
  QCOMPARE(doc.project().cluster.name, std::string("custom"));
  doc.undoStack()->undo();
  doc.undoStack()->undo();
  doc.undoStack()->undo();
  QVERIFY(doc.project().cluster == preset("h100x64"));
  QCOMPARE(page.intField(Field::NicsPerNode)->value(), 8);
  QCOMPARE(page.doubleField(Field::CongestionPercent)->value(), 0.0);
}

void TestClusterPage::networkTogglesEditTheClustersNetwork() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QCheckBox* nvls = page.toggle(Toggle::Nvls);
  QCheckBox* sharp = page.toggle(Toggle::Sharp);
  QVERIFY(nvls->isChecked());  // the H100 preset's NVSwitches reduce
  QVERIFY(!sharp->isChecked());
  nvls->setChecked(false);
  QVERIFY(!doc.project().cluster.network.nvls);
  QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Turn NVLS off"));
  sharp->setChecked(true);
  QVERIFY(doc.project().cluster.network.sharp);
  QCOMPARE(doc.undoStack()->text(1), QStringLiteral("Turn SHARP on"));
  QCOMPARE(doc.undoStack()->count(), 2);
  QCOMPARE(page.presetText(), QStringLiteral("Custom"));
  doc.undoStack()->undo();
  QVERIFY(!sharp->isChecked());
  QVERIFY(!nvls->isChecked());
  doc.undoStack()->undo();
  QVERIFY(nvls->isChecked());
  QVERIFY(doc.project().cluster == preset("h100x64"));
  QCOMPARE(doc.undoStack()->count(), 2);  // following the project made no edits
}

void TestClusterPage::networkFollowsTheProject() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  core::ClusterSpec fabric = preset("h100x512");
  fabric.network.nics_per_node = 2;
  fabric.network.sharp = true;
  fabric.network.congestion_per_doubling = 0.05;
  doc.edit(projectWith(fabric), QStringLiteral("elsewhere"));
  QCOMPARE(page.intField(Field::NicsPerNode)->value(), 2);
  QVERIFY(page.toggle(Toggle::Sharp)->isChecked());
  QVERIFY(page.toggle(Toggle::Nvls)->isChecked());
  QCOMPARE(page.doubleField(Field::CongestionPercent)->value(), 5.0);
  QCOMPARE(doc.undoStack()->count(), 1);
  QVERIFY(doc.project().cluster == fabric);
}

void TestClusterPage::interNodeBandwidthIsPerNic() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QVERIFY2(labelOf(page.doubleField(Field::InterBandwidth)).contains(QStringLiteral("per NIC")),
           qPrintable(labelOf(page.doubleField(Field::InterBandwidth))));
  QVERIFY2(labelOf(page.doubleField(Field::IntraBandwidth)).contains(QStringLiteral("per GPU")),
           qPrintable(labelOf(page.doubleField(Field::IntraBandwidth))));
  commit(page.doubleField(Field::InterBandwidth), 25.0);
  QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Set inter-node bandwidth to 25 GB/s per NIC"));
}

void TestClusterPage::gpuKindCarriesItsNetwork() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QVERIFY(doc.project().cluster.network.nvls);
  // On the presets' geometry the kind is its preset ...
  pick(page.gpuKindCombo(), QStringLiteral("A100"));
  QVERIFY(doc.project().cluster == preset("a100x64"));
  QVERIFY(!page.toggle(Toggle::Nvls)->isChecked());
  doc.undoStack()->undo();
  QVERIFY(page.toggle(Toggle::Nvls)->isChecked());
  // ... and on other geometry the kind's network comes with its GPU and links.
  commit(page.intField(Field::Nodes), 3);
  commit(page.intField(Field::NicsPerNode), 2);
  page.toggle(Toggle::Sharp)->setChecked(true);
  pick(page.gpuKindCombo(), QStringLiteral("A100"));
  const core::ClusterSpec& now = doc.project().cluster;
  QCOMPARE(now.nodes, 3u);
  QVERIFY(now.network == preset("a100x64").network);
  QVERIFY(!now.network.nvls);
  QVERIFY(!page.toggle(Toggle::Nvls)->isChecked());
  QVERIFY(!page.toggle(Toggle::Sharp)->isChecked());
  QCOMPARE(page.intField(Field::NicsPerNode)->value(), 8);
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("A100")));
  // Back to H100: NVLS again.
  pick(page.gpuKindCombo(), QStringLiteral("H100"));
  QVERIFY(doc.project().cluster.network.nvls);
  QVERIFY(page.toggle(Toggle::Nvls)->isChecked());
}

void TestClusterPage::userNamedClusterKeepsItsName() {
  ProjectDocument doc;
  core::ClusterSpec lab = preset("h100x64");
  lab.name = "lab";
  doc.reset(projectWith(lab));
  ClusterPage page(&doc);
  commit(page.intField(Field::Nodes), 2);
  QCOMPARE(doc.project().cluster.name, std::string("lab"));
  QCOMPARE(doc.project().cluster.nodes, 2u);
}

void TestClusterPage::untouchedFieldDoesNotRoundTheProject() {
  ProjectDocument doc;
  core::ClusterSpec odd = preset("h100x64");
  odd.gpu.hbm_bytes = 85'000'000'000;  // 79.1624... GiB: not what the field shows
  odd.inter_node.latency_us = 12.3456;
  doc.reset(projectWith(odd));
  ClusterPage page(&doc);
  page.show();
  for (QAbstractSpinBox* spin : {static_cast<QAbstractSpinBox*>(page.doubleField(Field::HbmGib)),
                                 static_cast<QAbstractSpinBox*>(page.doubleField(Field::InterLatency))}) {
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_Return);  // Enter on an untouched field
    emit spin->editingFinished();
  }
  QCOMPARE(doc.undoStack()->count(), 0);
  QVERIFY(doc.project().cluster == odd);
}

void TestClusterPage::typedHbmInGibShowsBackAsTyped() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  page.show();
  QDoubleSpinBox* hbm = page.doubleField(Field::HbmGib);
  QCOMPARE(hbm->suffix(), QStringLiteral(" GiB"));
  // Every value a user can type (two decimals) is stored as its bytes and shown back unchanged.
  for (const char* typed : {"141", "79.16", "0.01", "96.5", "65536"}) {
    hbm->setFocus();
    hbm->selectAll();
    QTest::keyClicks(hbm, QString::fromLatin1(typed));
    QTest::keyClick(hbm, Qt::Key_Return);
    const double value = QString::fromLatin1(typed).toDouble();
    QCOMPARE(doc.project().cluster.gpu.hbm_bytes, static_cast<std::uint64_t>(std::llround(value * kGib)));
    QCOMPARE(hbm->value(), value);
    QVERIFY2(hbm->text().endsWith(QStringLiteral(" GiB")), qPrintable(hbm->text()));
    QCOMPARE(hbm->valueFromText(hbm->cleanText()), value);
  }
  QCOMPARE(doc.undoStack()->count(), 5);
  QCOMPARE(doc.undoStack()->text(1), QStringLiteral("Set HBM to 79.16 GiB"));
  // Enter on what is shown is no edit: the shown text parses back to the same bytes.
  const std::uint64_t bytes = doc.project().cluster.gpu.hbm_bytes;
  hbm->setFocus();
  QTest::keyClick(hbm, Qt::Key_Return);
  QCOMPARE(doc.undoStack()->count(), 5);
  QCOMPARE(doc.project().cluster.gpu.hbm_bytes, bytes);
}

void TestClusterPage::gridThatNoLongerDividesNIsCleared() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(16, core::RankLayout::Contiguous);
  QCOMPARE(doc.undoStack()->count(), 1);
  commit(page.intField(Field::Nodes), 3);  // N = 24: 16 does not divide it
  QCOMPARE(doc.project().cluster.worldSize(), 24u);
  QVERIFY(!doc.project().chosen_group_size.has_value());
  QVERIFY(!doc.project().chosen_layout.has_value());
  QCOMPARE(doc.undoStack()->count(), 2);  // one step for both
  QVERIFY(doc.undoStack()->text(1).contains(QStringLiteral("clears grid M = 16")));
  QCOMPARE(page.diagram()->groupCount(), 0);
  doc.undoStack()->undo();
  QCOMPARE(doc.project().cluster.nodes, 8u);
  QCOMPARE(doc.project().chosen_group_size, std::optional<std::uint32_t>(16));
  QVERIFY(doc.project().chosen_layout == core::RankLayout::Contiguous);
  QCOMPARE(page.diagram()->groupCount(), 4);
}

void TestClusterPage::gridThatStillDividesNIsKept() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(8, core::RankLayout::Strided);
  commit(page.intField(Field::Nodes), 3);  // N = 24: 8 still divides it
  QCOMPARE(doc.project().chosen_group_size, std::optional<std::uint32_t>(8));
  QVERIFY(doc.project().chosen_layout == core::RankLayout::Strided);
  QCOMPARE(page.diagram()->groupCount(), 3);
}

void TestClusterPage::constraintsOnVanishedRanksAreKept() {
  ProjectDocument doc;
  core::Project p = core::defaultProject();
  p.constraints.rank_memory_caps.push_back({60, 40 * kGib});
  p.chosen_group_size = 64;
  p.chosen_layout = core::RankLayout::Strided;
  doc.reset(p);
  ClusterPage page(&doc);
  commit(page.intField(Field::Nodes), 1);  // N = 8: group rank 60 no longer exists
  QCOMPARE(doc.project().cluster.worldSize(), 8u);
  QVERIFY(!doc.project().chosen_group_size.has_value());
  QVERIFY(doc.project().constraints == p.constraints);
}

void TestClusterPage::refreshAfterUndoRedoMakesNoEdits() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  commit(page.intField(Field::Nodes), 4);
  pick(page.gpuKindCombo(), QStringLiteral("A100"));
  commit(page.doubleField(Field::PeakTflops), 400.0);
  QCOMPARE(doc.undoStack()->count(), 3);
  doc.undoStack()->undo();
  doc.undoStack()->undo();
  QCOMPARE(doc.undoStack()->count(), 3);
  QCOMPARE(doc.undoStack()->index(), 1);
  QCOMPARE(page.intField(Field::Nodes)->value(), 4);
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("H100")));
  doc.undoStack()->redo();
  QCOMPARE(doc.undoStack()->count(), 3);
  QCOMPARE(doc.undoStack()->index(), 2);
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("A100")));
  doc.undoStack()->undo();
  doc.undoStack()->undo();
  QCOMPARE(doc.undoStack()->count(), 3);
  QVERIFY(doc.project().cluster == preset("h100x64"));
  QCOMPARE(page.intField(Field::Nodes)->value(), 8);
  QVERIFY(!doc.isModified());
}

void TestClusterPage::outsideEditUpdatesTheWidgets() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.edit(projectWith(preset("h200x512")), QStringLiteral("elsewhere"));
  QCOMPARE(doc.undoStack()->count(), 1);
  QCOMPARE(page.presetText(), QStringLiteral("h200x512"));
  QVERIFY(page.gpuKindCombo()->currentText().startsWith(QStringLiteral("H200")));
  QVERIFY(page.worldSizeCombo()->currentText().startsWith(QStringLiteral("512 GPUs")));
  QCOMPARE(page.intField(Field::Nodes)->value(), 64);
  QCOMPARE(page.doubleField(Field::HbmBandwidth)->value(), 4800.0);
  // Opening a project is no edit either.
  doc.reset(projectWith(preset("a100x8")));
  QCOMPARE(doc.undoStack()->count(), 0);
  QCOMPARE(page.worldSizeText(), QStringLiteral("8 GPUs"));
  QCOMPARE(page.presetText(), QStringLiteral("a100x8"));
}

void TestClusterPage::totalsFollowTheCluster() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  QVERIFY2(page.totalsText().contains(QStringLiteral("5.0 TiB")), qPrintable(page.totalsText()));
  QVERIFY2(page.gridsText().startsWith(QStringLiteral("7 grids: M = 1, 2, 4, 8, 16, 32, 64")),
           qPrintable(page.gridsText()));
  commit(page.intField(Field::Nodes), 3);  // 24 = 2^3 x 3: 8 divisors
  QVERIFY2(page.gridsText().startsWith(QStringLiteral("8 grids: M = 1, 2, 3, 4, 6, 8, 12, 24")),
           qPrintable(page.gridsText()));
  QVERIFY2(page.totalsText().contains(QStringLiteral("1.9 TiB")), qPrintable(page.totalsText()));
}

void TestClusterPage::diagramColoursStridedGroups() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(8, core::RankLayout::Strided);
  const ClusterDiagram* d = page.diagram();
  QCOMPARE(d->groupCount(), 8);
  // Strided, R = 8: rank r is in group r mod 8, so every node holds one GPU of each group.
  for (std::uint32_t r = 0; r < 64; ++r) {
    QCOMPARE(d->groupOfGpu(r), static_cast<int>(r % 8));
    QCOMPARE(d->groupRankOfGpu(r), static_cast<int>(r / 8));
  }
  QCOMPARE(d->legendText(), QStringLiteral("8 sharding groups of 8 GPUs (strided: one GPU per node per group)"));
  QCOMPARE(d->groupOfGpu(64), -1);
}

void TestClusterPage::diagramColoursContiguousGroups() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(8, core::RankLayout::Contiguous);
  const ClusterDiagram* d = page.diagram();
  QCOMPARE(d->groupCount(), 8);
  // Contiguous: group g is node g.
  for (std::uint32_t r = 0; r < 64; ++r) QCOMPARE(d->groupOfGpu(r), static_cast<int>(r / 8));
  QCOMPARE(d->legendText(), QStringLiteral("8 sharding groups of 8 GPUs (contiguous: one node per group)"));
  QVERIFY(d->groupColor(0) != d->groupColor(1));
}

void TestClusterPage::diagramWithoutGridHasNoGroups() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  const ClusterDiagram* d = page.diagram();
  QCOMPARE(d->groupCount(), 0);
  QCOMPARE(d->groupOfGpu(0), -1);
  QVERIFY(d->legendText().startsWith(QStringLiteral("No grid chosen")));
}

void TestClusterPage::diagramDrawsAnOpenLayoutStrided() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(8);
  const ClusterDiagram* d = page.diagram();
  QCOMPARE(d->groupOfGpu(9), 1);
  QVERIFY(d->legendText().contains(QStringLiteral("drawn strided")));
}

void TestClusterPage::diagramFollowsTheChosenGrid() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  doc.chooseGrid(32, core::RankLayout::Contiguous);
  QCOMPARE(page.diagram()->groupCount(), 2);
  doc.undoStack()->undo();
  QCOMPARE(page.diagram()->groupCount(), 0);
  QCOMPARE(doc.undoStack()->count(), 1);
}

void TestClusterPage::diagramDescribesPlacement_data() {
  QTest::addColumn<uint>("m");
  QTest::addColumn<bool>("strided");
  QTest::addColumn<QString>("legend");
  QTest::newRow("M=16 strided") << 16u << true
                                << QStringLiteral(
                                       "4 sharding groups of 16 GPUs "
                                       "(strided: 2 GPUs per node per group, on every node)");
  QTest::newRow("M=16 contiguous") << 16u << false
                                   << QStringLiteral(
                                          "4 sharding groups of 16 GPUs "
                                          "(contiguous: 2 whole nodes per group)");
  QTest::newRow("M=4 contiguous") << 4u << false
                                  << QStringLiteral(
                                         "16 sharding groups of 4 GPUs "
                                         "(contiguous: each group inside one node, 2 groups per node)");
  QTest::newRow("M=4 strided") << 4u << true
                               << QStringLiteral(
                                      "16 sharding groups of 4 GPUs "
                                      "(strided: one GPU on each of 4 nodes per group)");
  QTest::newRow("M=64") << 64u << true << QStringLiteral("1 sharding group of 64 GPUs (strided: the whole cluster)");
  QTest::newRow("M=1") << 1u << false
                       << QStringLiteral(
                              "64 sharding groups of 1 GPU "
                              "(contiguous: one GPU each, pure data parallelism)");
}

void TestClusterPage::diagramDescribesPlacement() {
  QFETCH(uint, m);
  QFETCH(bool, strided);
  QFETCH(QString, legend);
  ClusterDiagram d;
  d.setCluster(8, 8);
  const core::RankLayout layout = strided ? core::RankLayout::Strided : core::RankLayout::Contiguous;
  d.setGrid(m, layout);
  QCOMPARE(d.legendText(), legend);
  // The colouring is core's layout, rank for rank.
  const core::RankGroups groups = core::shardingGroups(64, m, layout);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      QCOMPARE(d.groupOfGpu(groups[g][i]), static_cast<int>(g));
      QCOMPARE(d.groupRankOfGpu(groups[g][i]), static_cast<int>(i));
    }
}

void TestClusterPage::diagramFitsFourThousandGpus() {
  ClusterDiagram d;
  d.setCluster(512, 8);
  d.setGrid(8, core::RankLayout::Strided);
  d.resize(1100, 600);  // about what the page leaves it at 1280 x 800
  QCOMPARE(d.shownNodes(), 512u);
  QVERIFY(d.cellSize() >= 5);
  // Every GPU has its own place, and hit-testing finds it there.
  for (std::uint32_t r : {0u, 7u, 8u, 1000u, 4095u}) {
    const QRect cell = d.gpuRect(r);
    QVERIFY(!cell.isEmpty());
    QCOMPARE(d.gpuAt(cell.center()), std::optional<std::uint32_t>(r));
  }
  QVERIFY(!d.gpuRect(0).intersects(d.gpuRect(1)));
  QVERIFY(!d.gpuRect(4095).intersects(d.gpuRect(4094)));
  QVERIFY(d.rect().contains(d.gpuRect(4095)));
  QCOMPARE(d.gpuAt(QPoint(0, 0)), std::optional<std::uint32_t>());
}

void TestClusterPage::hoveringAGpuHighlightsItsGroup() {
  ClusterDiagram d;
  d.setCluster(8, 8);
  d.setGrid(8, core::RankLayout::Strided);
  d.resize(800, 500);
  d.show();
  QVERIFY(QTest::qWaitForWindowExposed(&d));
  QCOMPARE(d.highlightedGroup(), -1);
  QTest::mouseMove(&d, d.gpuRect(10).center());
  QCOMPARE(d.highlightedGroup(), 2);  // strided, R = 8: rank 10 is in group 2
  QTest::mouseMove(&d, d.gpuRect(35).center());
  QCOMPARE(d.highlightedGroup(), 3);
  // A new grid starts with nothing highlighted.
  d.setGrid(8, core::RankLayout::Contiguous);
  QCOMPARE(d.highlightedGroup(), -1);
  d.setHighlightedGroup(99);  // no such group
  QCOMPARE(d.highlightedGroup(), -1);
}

void TestClusterPage::diagramTruncatesClustersTooLargeToDraw() {
  ClusterDiagram d;
  d.setCluster(8192, 8);
  d.resize(800, 500);
  QVERIFY(d.shownNodes() > 0);
  QVERIFY(d.shownNodes() < 8192);
  const std::uint32_t last_shown = d.shownNodes() * 8 - 1;
  QVERIFY(d.rect().contains(d.gpuRect(last_shown)));
  QVERIFY(d.gpuRect(last_shown + 1).isEmpty());
  QCOMPARE(d.cellSize(), 5);
  // Enough room again: everything is drawn.
  d.setCluster(8, 8);
  QCOMPARE(d.shownNodes(), 8u);
}

// "From this machine's GPUs" with a synthetic machine: the query runs off the
// GUI thread, its cluster becomes one undoable edit, the line under the button
// says what was found; a failure changes nothing and says why.
void TestClusterPage::localGpusFillTheClusterAsOneUndoableEdit() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  ClusterPage::LocalCluster local;
  local.cluster = preset("h200x8");
  local.cluster.name = "node7: 8 x H200, NVLink";
  local.cluster.intra_node.bandwidth_gbps = 478.125;
  local.notes = {"intra-node: 18 NVLink links x 26.5625 GB/s"};
  page.setLocalClusterSource([local] { return shardscope::core::Result<ClusterPage::LocalCluster>(local); });
  page.useLocalGpus();
  QTRY_VERIFY(doc.project().cluster == local.cluster);
  QCOMPARE(doc.undoStack()->count(), 1);
  QVERIFY(doc.undoStack()->text(0).contains(QStringLiteral("node7")));
  QVERIFY2(page.localGpusText().contains(QStringLiteral("478.1")), qPrintable(page.localGpusText()));
  QVERIFY(page.localGpusButton()->isEnabled());
  doc.undoStack()->undo();
  QVERIFY(doc.project().cluster == preset("h100x64"));
}

void TestClusterPage::localGpusFailureLeavesTheClusterAndSaysWhy() {
  ProjectDocument doc;
  ClusterPage page(&doc);
  page.setLocalClusterSource([] {
    return shardscope::core::Result<ClusterPage::LocalCluster>(
        core::Error{"no GPU visible: CUDA reports no device", core::ErrorKind::Io});
  });
  page.useLocalGpus();
  QTRY_VERIFY(page.localGpusText().contains(QStringLiteral("no GPU visible")));
  QTRY_VERIFY(page.localGpusButton()->isEnabled());
  QVERIFY(doc.project().cluster == preset("h100x64"));
  QCOMPARE(doc.undoStack()->count(), 0);
  QVERIFY(page.findChild<QWidget*>(QStringLiteral("localGpusMessage")) != nullptr);
}

QTEST_MAIN(TestClusterPage)
#include "test_cluster_page.moc"
