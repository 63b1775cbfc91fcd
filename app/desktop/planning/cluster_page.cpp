#include "cluster_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cluster_diagram.h"
#include "job_tracker.h"
#include "project_document.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

int field(ClusterPage::Field f) { return static_cast<int>(f); }

QString number(double v) { return QString::fromStdString(report::formatShort(v)); }
QString count(std::uint64_t n) { return QString::fromStdString(report::formatCount(n)); }

QGroupBox* groupAround(const QString& title, QLayout* content) {
  auto* box = new QGroupBox(title);
  box->setLayout(content);
  return box;
}

QFormLayout* makeForm() {
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignLeft);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::DontWrapRows);
  return form;
}

// The last item of a picker: shown when the values match no entry, never pickable.
void addCustomItem(QComboBox* combo) {
  combo->addItem(ClusterPage::tr("Custom"));
  auto* model = qobject_cast<QStandardItemModel*>(combo->model());
  if (model != nullptr) {
    QStandardItem* item = model->item(combo->count() - 1);
    item->setFlags(item->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
  }
}

// "8 NICs per node, NVLS, no SHARP": a kind's network in its picker's tooltip.
QString networkText(const core::NetworkSpec& n) {
  const QString nics = n.nics_per_node == 0 ? ClusterPage::tr("one NIC per GPU")
                                            : ClusterPage::tr("%1 NICs per node").arg(n.nics_per_node);
  QString text = ClusterPage::tr("%1, %2, %3")
                     .arg(nics, n.nvls ? ClusterPage::tr("NVLS") : ClusterPage::tr("no NVLS"),
                          n.sharp ? ClusterPage::tr("SHARP") : ClusterPage::tr("no SHARP"));
  if (n.congestion_per_doubling > 0)
    text += ClusterPage::tr(", %1 % congestion per doubling").arg(number(n.congestion_per_doubling * 100.0));
  return text;
}

}  // namespace

ClusterPage::ClusterPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      catalog_(report::ClusterCatalog::builtIn()),
      kind_combo_(new QComboBox),
      size_combo_(new QComboBox),
      preset_label_(new QLabel),
      local_button_(new QPushButton(tr("From this machine's GPUs"))),
      local_label_(new QLabel),
      local_jobs_(new JobTracker(planningPool(), this)),
      world_label_(new QLabel),
      totals_label_(new QLabel),
      grids_label_(new QLabel),
      legend_label_(new QLabel),
      diagram_(new ClusterDiagram) {
  setObjectName(QStringLiteral("clusterPage"));
  auto* preset_form = buildPresetPickers();
  buildFields();

  auto* nodes_form = makeForm();
  nodes_form->addRow(tr("Nodes:"), intField(Field::Nodes));
  nodes_form->addRow(tr("GPUs per node:"), intField(Field::GpusPerNode));
  auto* gpu_form = makeForm();
  gpu_form->addRow(tr("HBM capacity:"), doubleField(Field::HbmGib));
  gpu_form->addRow(tr("HBM bandwidth:"), doubleField(Field::HbmBandwidth));
  gpu_form->addRow(tr("Peak dense:"), doubleField(Field::PeakTflops));
  auto* links_form = makeForm();
  links_form->addRow(tr("Intra-node bandwidth per GPU:"), doubleField(Field::IntraBandwidth));
  links_form->addRow(tr("Intra-node latency:"), doubleField(Field::IntraLatency));
  links_form->addRow(tr("Inter-node bandwidth per NIC:"), doubleField(Field::InterBandwidth));
  links_form->addRow(tr("Inter-node latency:"), doubleField(Field::InterLatency));
  buildToggles();
  auto* network_form = makeForm();
  network_form->addRow(tr("NICs per node:"), intField(Field::NicsPerNode));
  network_form->addRow(tr("In-node reduction:"), toggle(Toggle::Nvls));
  network_form->addRow(tr("In-network reduction:"), toggle(Toggle::Sharp));
  network_form->addRow(tr("Congestion:"), doubleField(Field::CongestionPercent));

  auto* settings = new QWidget;
  auto* settings_layout = new QVBoxLayout(settings);
  settings_layout->setContentsMargins(0, 0, 0, 0);
  settings_layout->addWidget(groupAround(tr("Preset"), preset_form));
  settings_layout->addWidget(groupAround(tr("Nodes"), nodes_form));
  settings_layout->addWidget(groupAround(tr("GPU"), gpu_form));
  settings_layout->addWidget(groupAround(tr("Links (one direction)"), links_form));
  settings_layout->addWidget(groupAround(tr("Network between nodes"), network_form));
  settings_layout->addStretch(1);
  // Scrolls only when the window is shorter than the forms.
  auto* settings_scroll = new QScrollArea;
  settings_scroll->setWidget(settings);
  settings_scroll->setWidgetResizable(true);
  settings_scroll->setFrameShape(QFrame::NoFrame);
  settings_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  settings_scroll->setFixedWidth(settings->sizeHint().width() + 24);

  QLayout* summary = buildSummary();
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(settings_scroll);
  layout->addLayout(summary, 1);

  connect(document_, &ProjectDocument::projectChanged, this, &ClusterPage::refresh);
  // Only the diagram shows the grid: a choice made elsewhere leaves a field being typed in alone.
  connect(document_, &ProjectDocument::chosenGridChanged, this, &ClusterPage::refreshDiagram);
  refresh();
}

QFormLayout* ClusterPage::buildPresetPickers() {
  kind_combo_->setObjectName(QStringLiteral("gpuKindCombo"));
  for (const report::ClusterCatalog::Kind& kind : catalog_.kinds()) {
    kind_combo_->addItem(QString::fromStdString(kind.gpu.name));
    kind_combo_->setItemData(
        kind_combo_->count() - 1,
        tr("%1 GiB HBM at %2 GB/s, %3 TFLOP/s dense; intra-node %4 GB/s per GPU, inter-node %5 GB/s per NIC; "
           "%6")
            .arg(number(static_cast<double>(kind.gpu.hbm_bytes) / kGib), number(kind.gpu.hbm_bandwidth_gbps),
                 number(kind.gpu.peak_dense_tflops), number(kind.intra_node.bandwidth_gbps),
                 number(kind.inter_node.bandwidth_gbps), networkText(kind.network)),
        Qt::ToolTipRole);
  }
  addCustomItem(kind_combo_);
  size_combo_->setObjectName(QStringLiteral("worldSizeCombo"));
  for (const report::ClusterCatalog::Size& size : catalog_.sizes()) {
    const QString nodes = size.nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(count(size.nodes));
    size_combo_->addItem(tr("%1 GPUs (%2 \u00d7 %3)")
                             .arg(count(static_cast<std::uint64_t>(size.nodes) * size.gpus_per_node), nodes)
                             .arg(size.gpus_per_node));
  }
  addCustomItem(size_combo_);
  // activated: the user's picks only, never refresh()'s.
  connect(kind_combo_, &QComboBox::activated, this, &ClusterPage::applyGpuKind);
  connect(size_combo_, &QComboBox::activated, this, &ClusterPage::applyWorldSize);
  preset_label_->setObjectName(QStringLiteral("presetLabel"));
  preset_label_->setToolTip(tr("The built-in preset these values match, else Custom"));

  local_button_->setObjectName(QStringLiteral("localGpusButton"));
  local_button_->setToolTip(
      tr("One node of the GPUs this computer has: their kind, count and links (NVLink or PCIe), as "
         "`shardscope-cli devices --cluster-out` writes it"));
  connect(local_button_, &QPushButton::clicked, this, &ClusterPage::useLocalGpus);
  local_label_->setObjectName(QStringLiteral("localGpusLabel"));
  local_label_->setWordWrap(true);
  local_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  local_label_->hide();
  connect(local_jobs_, &JobTracker::failed, this,
          [this](quint64, const QString& message) { localGpusFailed(message); });

  auto* preset_form = makeForm();
  preset_form->addRow(tr("GPU kind:"), kind_combo_);
  preset_form->addRow(tr("World size:"), size_combo_);
  preset_form->addRow(tr("Matches:"), preset_label_);
  preset_form->addRow(local_button_);
  preset_form->addRow(local_label_);
  return preset_form;
}

void ClusterPage::buildFields() {
  // The numeric fields. keyboardTracking off: valueChanged comes on Enter,
  // focus out or a step, never per keystroke, so each commit is one edit.
  struct IntSpec {
    Field field;
    const char* object;
    int min;
    int max;
    QString tip;
  };
  const IntSpec int_specs[] = {
      {Field::Nodes, "nodesSpin", 1, 1048576, tr("Machines in the cluster")},
      {Field::GpusPerNode, "gpusPerNodeSpin", 1, 1024, tr("GPUs in one machine, joined by the intra-node link")},
      {Field::NicsPerNode, "nicsPerNodeSpin", 0, 1024,
       tr("Network cards (rails) of one node; collectives across nodes use them all. 0: one per GPU")},
  };
  for (const IntSpec& spec : int_specs) {
    auto* spin = new QSpinBox;
    spin->setObjectName(QLatin1String(spec.object));
    spin->setRange(spec.min, spec.max);
    spin->setGroupSeparatorShown(true);
    spin->setKeyboardTracking(false);
    spin->setAccelerated(true);
    spin->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    spin->setToolTip(spec.tip);
    if (spec.field == Field::NicsPerNode) spin->setSpecialValueText(tr("one per GPU"));
    fields_[static_cast<std::size_t>(field(spec.field))] = spin;
    connect(spin, &QSpinBox::valueChanged, this, [this, f = spec.field] { commitField(f); });
  }
  struct DoubleSpec {
    Field field;
    const char* object;
    double min;
    double max;
    int decimals;
    const char* suffix;
    QString tip;
  };
  const DoubleSpec double_specs[] = {
      {Field::HbmGib, "hbmSpin", 0.01, 65536.0, 2, " GiB", tr("HBM capacity of one GPU (vendors' \"80GB\" is 80 GiB)")},
      {Field::HbmBandwidth, "hbmBandwidthSpin", 1.0, 1.0e6, 1, " GB/s",
       tr("HBM bandwidth of one GPU, 1 GB = 1e9 bytes")},
      {Field::PeakTflops, "peakTflopsSpin", 0.1, 1.0e6, 1, " TFLOP/s", tr("Dense BF16 peak of one GPU, no sparsity")},
      {Field::IntraBandwidth, "intraBandwidthSpin", 0.01, 1.0e6, 2, " GB/s",
       tr("Intra-node link (NVLink): bandwidth per GPU, one direction")},
      {Field::IntraLatency, "intraLatencySpin", 0.0, 1.0e6, 2, " \u00b5s", tr("Intra-node link latency")},
      {Field::InterBandwidth, "interBandwidthSpin", 0.01, 1.0e6, 2, " GB/s",
       tr("Inter-node network: bandwidth of one NIC (a rail), one direction; a node has NICs per node of them")},
      {Field::InterLatency, "interLatencySpin", 0.0, 1.0e6, 2, " \u00b5s", tr("Inter-node network latency")},
      {Field::CongestionPercent, "congestionSpin", 0.0, 50.0, 1, " % per doubling",
       tr("Share of inter-node collective bandwidth lost each time a collective spans twice the nodes: 0 for a "
          "non-blocking fat tree, more for an oversubscribed fabric")},
  };
  for (const DoubleSpec& spec : double_specs) {
    auto* spin = new QDoubleSpinBox;
    spin->setObjectName(QLatin1String(spec.object));
    spin->setDecimals(spec.decimals);
    spin->setRange(spec.min, spec.max);
    spin->setSuffix(QString::fromUtf8(spec.suffix));
    spin->setGroupSeparatorShown(true);
    spin->setKeyboardTracking(false);
    spin->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    spin->setToolTip(spec.tip);
    fields_[static_cast<std::size_t>(field(spec.field))] = spin;
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, f = spec.field] { commitField(f); });
  }
}

void ClusterPage::buildToggles() {
  struct ToggleSpec {
    Toggle which;
    const char* object;
    QString text;
    QString tip;
  };
  const ToggleSpec specs[] = {
      {Toggle::Nvls, "nvlsCheck", tr("NVLS (NVLink SHARP)"),
       tr("The NVSwitches reduce (H100, H200 and B200 HGX): NCCL's NVLS all-reduce inside a node")},
      {Toggle::Sharp, "sharpCheck", tr("SHARP (InfiniBand switches)"),
       tr("The InfiniBand switches reduce (SHARP, NCCL CollNet): all-reduce across nodes in the fabric")},
  };
  for (const ToggleSpec& spec : specs) {
    auto* check = new QCheckBox(spec.text);
    check->setObjectName(QLatin1String(spec.object));
    check->setToolTip(spec.tip);
    toggles_[static_cast<std::size_t>(spec.which)] = check;
    connect(check, &QCheckBox::toggled, this, [this, t = spec.which] { commitToggle(t); });
  }
}

QLayout* ClusterPage::buildSummary() {
  // N first and large: it is what every other page depends on.
  world_label_->setObjectName(QStringLiteral("worldSizeLabel"));
  QFont big = world_label_->font();
  big.setPointSizeF(big.pointSizeF() * 2.0);
  big.setBold(true);
  world_label_->setFont(big);
  totals_label_->setObjectName(QStringLiteral("totalsLabel"));
  grids_label_->setObjectName(QStringLiteral("gridsLabel"));
  grids_label_->setWordWrap(true);
  grids_label_->setToolTip(tr("A grid is a sharding group size M that divides N: R = N / M replicas of M GPUs"));
  for (QLabel* label : {world_label_, totals_label_, grids_label_})
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* totals = new QVBoxLayout;
  totals->addWidget(totals_label_);
  totals->addWidget(grids_label_);
  auto* summary = new QHBoxLayout;
  summary->addWidget(world_label_);
  summary->addSpacing(16);
  summary->addLayout(totals, 1);

  legend_label_->setObjectName(QStringLiteral("diagramLegend"));
  legend_label_->setWordWrap(true);
  auto* diagram_layout = new QVBoxLayout;
  diagram_layout->addWidget(legend_label_);
  diagram_layout->addWidget(diagram_, 1);

  auto* right = new QVBoxLayout;
  right->addWidget(groupAround(tr("Cluster"), summary));
  right->addWidget(groupAround(tr("Nodes \u00d7 GPUs"), diagram_layout), 1);
  return right;
}

QSpinBox* ClusterPage::intField(Field f) const {
  const int i = field(f);
  return i >= 0 && i < kFieldCount ? qobject_cast<QSpinBox*>(fields_[static_cast<std::size_t>(i)]) : nullptr;
}

QDoubleSpinBox* ClusterPage::doubleField(Field f) const {
  const int i = field(f);
  return i >= 0 && i < kFieldCount ? qobject_cast<QDoubleSpinBox*>(fields_[static_cast<std::size_t>(i)]) : nullptr;
}

QCheckBox* ClusterPage::toggle(Toggle which) const {
  const auto i = static_cast<std::size_t>(which);
  return i < toggles_.size() ? toggles_[i] : nullptr;
}

QString ClusterPage::presetText() const {
  const core::ClusterSpec& c = document_->project().cluster;
  const core::ClusterSpec* preset = catalog_.matchingPreset(c);
  if (preset == nullptr) return tr("Custom");
  QString text = QString::fromStdString(preset->name);
  if (!c.collectives.empty()) text += tr(" + measured collectives");
  return text;
}

QString ClusterPage::worldSizeText() const { return world_label_->text(); }
QString ClusterPage::totalsText() const { return totals_label_->text(); }
QString ClusterPage::gridsText() const { return grids_label_->text(); }

void ClusterPage::applyGpuKind(int kind_index) {
  if (kind_index < 0 || kind_index >= static_cast<int>(catalog_.kinds().size())) {
    refresh();  // "Custom" or nothing: show the project's values again
    return;
  }
  const core::ClusterSpec& current = document_->project().cluster;
  if (catalog_.matchingKind(current) == kind_index) return;  // already this kind: nothing to apply
  if (const core::ClusterSpec* preset = catalog_.preset(kind_index, catalog_.matchingSize(current))) {
    commitCluster(*preset, tr("Use cluster preset %1").arg(QString::fromStdString(preset->name)));
    return;
  }
  const report::ClusterCatalog::Kind& kind = catalog_.kinds()[static_cast<std::size_t>(kind_index)];
  core::ClusterSpec next = current;
  next.gpu = kind.gpu;
  next.intra_node = kind.intra_node;
  next.inter_node = kind.inter_node;
  next.network = kind.network;
  next.collectives.clear();  // measured on other hardware
  commitCluster(std::move(next), tr("Use %1 GPUs").arg(QString::fromStdString(kind.gpu.name)));
}

void ClusterPage::applyWorldSize(int size_index) {
  if (size_index < 0 || size_index >= static_cast<int>(catalog_.sizes().size())) {
    refresh();
    return;
  }
  const core::ClusterSpec& current = document_->project().cluster;
  if (catalog_.matchingSize(current) == size_index) return;
  if (const core::ClusterSpec* preset = catalog_.preset(catalog_.matchingKind(current), size_index)) {
    commitCluster(*preset, tr("Use cluster preset %1").arg(QString::fromStdString(preset->name)));
    return;
  }
  const report::ClusterCatalog::Size& size = catalog_.sizes()[static_cast<std::size_t>(size_index)];
  core::ClusterSpec next = current;
  next.nodes = size.nodes;
  next.gpus_per_node = size.gpus_per_node;
  commitCluster(std::move(next), tr("Set world size to %1 GPUs (%2 \u00d7 %3)")
                                     .arg(count(static_cast<std::uint64_t>(size.nodes) * size.gpus_per_node))
                                     .arg(size.nodes)
                                     .arg(size.gpus_per_node));
}

QString ClusterPage::localGpusText() const { return local_label_->text(); }

void ClusterPage::useLocalGpus() {
  if (local_jobs_->isRunning()) return;
  local_button_->setEnabled(false);
  local_label_->setText(tr("Asking this machine's GPUs\u2026"));
  local_label_->setToolTip({});
  local_label_->show();
  // The CUDA and NVML queries take up to seconds on a cold driver: never on the GUI thread.
  local_jobs_->start(
      [source = local_source_](JobContext&) -> core::Result<LocalCluster> {
        if (!source) return core::Error{"this program cannot ask the GPUs", core::ErrorKind::Internal};
        return source();
      },
      [this](LocalCluster local) { applyLocalCluster(local); });
}

void ClusterPage::applyLocalCluster(const LocalCluster& local) {
  local_button_->setEnabled(true);
  const core::ClusterSpec& c = local.cluster;
  local_label_->setText(tr("%1 \u00b7 intra-node %2 GB/s per GPU (hover for where the figures come from)")
                            .arg(QString::fromStdString(c.name), number(c.intra_node.bandwidth_gbps)));
  QStringList notes;
  for (const std::string& note : local.notes) notes << QString::fromStdString(note);
  local_label_->setToolTip(notes.join(QLatin1Char('\n')));
  commitCluster(c, tr("Use this machine's GPUs (%1)").arg(QString::fromStdString(c.name)));
}

void ClusterPage::localGpusFailed(const QString& message) {
  local_button_->setEnabled(true);
  local_label_->setText(message);
  local_label_->setToolTip({});
  // Not modal: the page (and a test driving it) goes on while the box is up.
  QString text = message;
  if (!text.isEmpty()) text[0] = text[0].toUpper();
  auto* box = new QMessageBox(QMessageBox::Warning, tr("From this machine's GPUs"), text, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("localGpusMessage"));
  box->setInformativeText(tr("The cluster is unchanged."));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void ClusterPage::commitField(Field f) {
  if (refreshing_) return;
  const auto i = static_cast<std::size_t>(field(f));
  const QSpinBox* int_spin = intField(f);
  const double value = int_spin != nullptr ? int_spin->value() : doubleField(f)->value();
  if (value == shown_[i]) return;  // focus left an untouched field
  core::ClusterSpec next = document_->project().cluster;
  QString description;
  switch (f) {
    case Field::Nodes:
      next.nodes = static_cast<std::uint32_t>(value);
      description = tr("Set nodes to %1").arg(count(next.nodes));
      break;
    case Field::GpusPerNode:
      next.gpus_per_node = static_cast<std::uint32_t>(value);
      description = tr("Set GPUs per node to %1").arg(next.gpus_per_node);
      break;
    case Field::HbmGib:
      next.gpu.hbm_bytes = static_cast<std::uint64_t>(std::llround(value * kGib));
      description = tr("Set HBM to %1 GiB").arg(number(value));
      break;
    case Field::HbmBandwidth:
      next.gpu.hbm_bandwidth_gbps = value;
      description = tr("Set HBM bandwidth to %1 GB/s").arg(number(value));
      break;
    case Field::PeakTflops:
      next.gpu.peak_dense_tflops = value;
      description = tr("Set peak dense to %1 TFLOP/s").arg(number(value));
      break;
    case Field::IntraBandwidth:
      next.intra_node.bandwidth_gbps = value;
      description = tr("Set intra-node bandwidth to %1 GB/s").arg(number(value));
      break;
    case Field::IntraLatency:
      next.intra_node.latency_us = value;
      description = tr("Set intra-node latency to %1 \u00b5s").arg(number(value));
      break;
    case Field::InterBandwidth:
      next.inter_node.bandwidth_gbps = value;
      description = tr("Set inter-node bandwidth to %1 GB/s per NIC").arg(number(value));
      break;
    case Field::InterLatency:
      next.inter_node.latency_us = value;
      description = tr("Set inter-node latency to %1 \u00b5s").arg(number(value));
      break;
    case Field::NicsPerNode:
      next.network.nics_per_node = static_cast<std::uint32_t>(value);
      description = next.network.nics_per_node == 0 ? tr("Set NICs per node to one per GPU")
                                                    : tr("Set NICs per node to %1").arg(next.network.nics_per_node);
      break;
    case Field::CongestionPercent:
      next.network.congestion_per_doubling = value / 100.0;
      description = tr("Set congestion to %1 % per doubling").arg(number(value));
      break;
  }
  commitCluster(std::move(next), description);
}

void ClusterPage::commitToggle(Toggle which) {
  if (refreshing_) return;
  const bool on = toggle(which)->isChecked();
  core::ClusterSpec next = document_->project().cluster;
  QString description;
  switch (which) {
    case Toggle::Nvls:
      next.network.nvls = on;
      description = on ? tr("Turn NVLS on") : tr("Turn NVLS off");
      break;
    case Toggle::Sharp:
      next.network.sharp = on;
      description = on ? tr("Turn SHARP on") : tr("Turn SHARP off");
      break;
  }
  commitCluster(std::move(next), description);
}

void ClusterPage::commitCluster(core::ClusterSpec cluster, const QString& description) {
  core::Project next = document_->project();
  next.cluster = catalog_.namedForValues(std::move(cluster));
  QString text = description;
  const std::uint32_t n = next.cluster.worldSize();
  if (next.chosen_group_size && (*next.chosen_group_size == 0 || n % *next.chosen_group_size != 0)) {
    // The project must stay valid: a grid whose M does not divide N goes in the same step.
    text = tr("%1 (clears grid M = %2)").arg(description).arg(*next.chosen_group_size);
    next.chosen_group_size.reset();
    next.chosen_layout.reset();
  }
  document_->edit(std::move(next), text);
  refresh();  // an edit that changes nothing emits nothing; show the project's values anyway
}

void ClusterPage::refresh() {
  refreshing_ = true;
  const core::Project& project = document_->project();
  const core::ClusterSpec& c = project.cluster;

  const int kind = catalog_.matchingKind(c);
  const int size = catalog_.matchingSize(c);
  {
    const QSignalBlocker block_kind(kind_combo_);
    const QSignalBlocker block_size(size_combo_);
    kind_combo_->setCurrentIndex(kind >= 0 ? kind : kind_combo_->count() - 1);
    size_combo_->setCurrentIndex(size >= 0 ? size : size_combo_->count() - 1);
  }
  preset_label_->setText(presetText());

  const double values[kFieldCount] = {
      static_cast<double>(c.nodes),
      static_cast<double>(c.gpus_per_node),
      static_cast<double>(c.gpu.hbm_bytes) / kGib,
      c.gpu.hbm_bandwidth_gbps,
      c.gpu.peak_dense_tflops,
      c.intra_node.bandwidth_gbps,
      c.intra_node.latency_us,
      c.inter_node.bandwidth_gbps,
      c.inter_node.latency_us,
      static_cast<double>(c.network.nics_per_node),
      c.network.congestion_per_doubling * 100.0,
  };
  for (int i = 0; i < kFieldCount; ++i) {
    const auto f = static_cast<Field>(i);
    const auto slot = static_cast<std::size_t>(i);
    if (QSpinBox* spin = intField(f)) {
      const QSignalBlocker block(spin);
      spin->setValue(static_cast<int>(std::min(values[i], 2147483647.0)));
      shown_[slot] = spin->value();
    } else if (QDoubleSpinBox* dspin = doubleField(f)) {
      const QSignalBlocker block(dspin);
      dspin->setValue(values[i]);  // rounds to the field's decimals; shown_ keeps what it shows
      shown_[slot] = dspin->value();
    }
  }
  const bool toggled[] = {c.network.nvls, c.network.sharp};
  for (std::size_t i = 0; i < toggles_.size(); ++i) {
    const QSignalBlocker block(toggles_[i]);
    toggles_[i]->setChecked(toggled[i]);
  }

  const std::uint32_t n = c.worldSize();
  world_label_->setText(n == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(count(n)));
  const double total_tflops = c.gpu.peak_dense_tflops * n;
  // Saturates instead of wrapping for absurd sizes (a million nodes of 1,024 GPUs).
  const double total_hbm_d = static_cast<double>(c.gpu.hbm_bytes) * n;
  const std::uint64_t total_hbm =
      total_hbm_d >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(total_hbm_d);
  const QString peak = total_tflops >= 1.0e6    ? tr("%1 EFLOP/s").arg(QString::number(total_tflops / 1.0e6, 'f', 2))
                       : total_tflops >= 1000.0 ? tr("%1 PFLOP/s").arg(QString::number(total_tflops / 1000.0, 'f', 1))
                                                : tr("%1 TFLOP/s").arg(QString::number(total_tflops, 'f', 0));
  totals_label_->setText(tr("%1 \u00d7 %2 per node \u00b7 %3 HBM in all \u00b7 %4 dense peak")
                             .arg(c.nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(count(c.nodes)),
                                  c.gpus_per_node == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(count(c.gpus_per_node)),
                                  QString::fromStdString(core::formatBytes(total_hbm)), peak));
  const std::vector<std::uint32_t> ms = report::divisors(n);
  QStringList listed;
  constexpr std::size_t kListed = 16;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (ms.size() > kListed && i == kListed - 2) {
      listed << QStringLiteral("\u2026");
      i = ms.size() - 2;
    }
    listed << count(ms[i]);
  }
  grids_label_->setText(ms.size() == 1 ? tr("1 grid: M = %1").arg(listed.join(QStringLiteral(", ")))
                                       : tr("%1 grids: M = %2 (sharding group sizes that divide N)")
                                             .arg(ms.size())
                                             .arg(listed.join(QStringLiteral(", "))));

  refreshDiagram();
  refreshing_ = false;
}

void ClusterPage::refreshDiagram() {
  const core::Project& project = document_->project();
  diagram_->setCluster(project.cluster.nodes, project.cluster.gpus_per_node);
  diagram_->setGrid(project.chosen_group_size, project.chosen_layout);
  QString legend = diagram_->legendText();
  if (diagram_->groupCount() > 1) legend += tr(". Hover a GPU to highlight its group.");
  legend_label_->setText(legend);
}

}  // namespace shardscope::app
