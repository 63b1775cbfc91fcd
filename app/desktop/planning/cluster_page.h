// The Cluster page: the GPUs a plan runs on. A preset picker (GPU kind x
// world size from the built-in cluster presets), "From this machine's GPUs"
// (one node of the local GPUs, from the source the window gives it, queried
// on a worker thread), custom values for nodes,
// GPUs, HBM, links and the network between nodes, the totals that follow (N, HBM, grids), and a diagram
// of nodes x GPUs coloured by the chosen grid's sharding groups. Every
// change is one undoable ProjectDocument edit; the widgets follow the
// project (open, undo, redo) without making edits of their own.
#pragma once

#include <QString>
#include <QWidget>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/result.h"
#include "shardscope/report/cluster_catalog.h"

class QAbstractSpinBox;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLayout;
class QPushButton;
class QSpinBox;

namespace shardscope::app {

class ClusterDiagram;
class JobTracker;
class ProjectDocument;

class ClusterPage : public QWidget {
  Q_OBJECT

 public:
  // The numeric fields, each a spin box committing on Enter / focus out.
  enum class Field {
    Nodes,              // QSpinBox
    GpusPerNode,        // QSpinBox
    HbmGib,             // QDoubleSpinBox, as the rest but NicsPerNode
    HbmBandwidth,       // GB/s
    PeakTflops,         // dense BF16 TFLOP/s
    IntraBandwidth,     // GB/s per GPU (NVLink), one direction
    IntraLatency,       // µs
    InterBandwidth,     // GB/s per NIC (a rail), one direction
    InterLatency,       // µs
    NicsPerNode,        // QSpinBox; 0 shows "one per GPU"
    CongestionPercent,  // % of inter-node bandwidth lost per doubling of the nodes
  };
  static constexpr int kFieldCount = 11;
  // The network's switches, each a check box committing when toggled.
  enum class Toggle {
    Nvls,   // NVLink SHARP: the NVSwitches reduce
    Sharp,  // in-network reduction in the InfiniBand switches
  };

  explicit ClusterPage(ProjectDocument* document, QWidget* parent = nullptr);

  // Preset pickers. Each lists the presets' GPU kinds / world sizes and a
  // last, unselectable "Custom" item shown when the values match none.
  [[nodiscard]] QComboBox* gpuKindCombo() const { return kind_combo_; }
  [[nodiscard]] QComboBox* worldSizeCombo() const { return size_combo_; }
  [[nodiscard]] QSpinBox* intField(Field field) const;           // Nodes, GpusPerNode, NicsPerNode; else nullptr
  [[nodiscard]] QDoubleSpinBox* doubleField(Field field) const;  // the others; else nullptr
  [[nodiscard]] QCheckBox* toggle(Toggle which) const;
  [[nodiscard]] ClusterDiagram* diagram() const { return diagram_; }

  // The preset the cluster's values match ("h100x64"), else "Custom".
  [[nodiscard]] QString presetText() const;
  [[nodiscard]] QString worldSizeText() const;  // "64 GPUs"
  [[nodiscard]] QString totalsText() const;     // "8 nodes × 8 GPUs per node · 5.0 TiB HBM · …"
  [[nodiscard]] QString gridsText() const;      // "7 grids: M = 1, 2, 4, 8, 16, 32, 64"

  // The pickers' actions (also what choosing in the combos does): the kind's
  // GPU, links and network, keeping nodes x GPUs per node; or the size's nodes x GPUs
  // per node, keeping the GPU. Where both match a preset the cluster becomes
  // that preset exactly. One undoable edit each; out-of-range: nothing.
  void applyGpuKind(int kind_index);
  void applyWorldSize(int size_index);

  // "From this machine's GPUs": asks the local GPUs on a worker thread, then
  // makes the cluster one node of them (one undoable edit); no GPU, no CUDA
  // in the build or GPUs of two models: a message box, the cluster unchanged.
  void useLocalGpus();
  [[nodiscard]] QPushButton* localGpusButton() const { return local_button_; }
  [[nodiscard]] QString localGpusText() const;  // what the last query found, or why it failed
  // What a query of the machine found: one node of its GPUs as a cluster,
  // and a line per figure that is not read off the GPUs as is.
  struct LocalCluster {
    core::ClusterSpec cluster;
    std::vector<std::string> notes;
  };
  using LocalClusterSource = std::function<core::Result<LocalCluster>()>;
  // Where useLocalGpus() gets the machine: the main window's asks the GPUs
  // (profiler/engine/local_cluster.h), tests pass synthetic ones; without a
  // source the query fails and says so.
  void setLocalClusterSource(LocalClusterSource source) { local_source_ = std::move(source); }

 private:
  [[nodiscard]] QFormLayout* buildPresetPickers();
  void buildFields();
  void buildToggles();
  [[nodiscard]] QLayout* buildSummary();
  void refresh();
  void refreshDiagram();
  void commitField(Field field);
  void commitToggle(Toggle which);
  void commitCluster(core::ClusterSpec cluster, const QString& description);
  void applyLocalCluster(const LocalCluster& local);
  void localGpusFailed(const QString& message);

  ProjectDocument* document_;
  report::ClusterCatalog catalog_;

  QComboBox* kind_combo_;
  QComboBox* size_combo_;
  QLabel* preset_label_;
  QPushButton* local_button_;
  QLabel* local_label_;
  JobTracker* local_jobs_;
  LocalClusterSource local_source_;
  std::array<QAbstractSpinBox*, kFieldCount> fields_{};
  std::array<QCheckBox*, 2> toggles_{};
  // What refresh() put in each field: a field commits only when its value
  // differs, so focus leaving an untouched field never rounds the project.
  std::array<double, kFieldCount> shown_{};
  QLabel* world_label_;
  QLabel* totals_label_;
  QLabel* grids_label_;
  QLabel* legend_label_;
  ClusterDiagram* diagram_;
  bool refreshing_ = false;
};

}  // namespace shardscope::app
