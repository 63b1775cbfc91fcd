// A picture of the cluster for the Cluster page: nodes as boxes of GPU cells,
// each GPU coloured by its sharding group when a grid is chosen. Large
// clusters shrink to small tiles and, past what still fits legibly, show the
// first nodes and a count of the rest; text is never drawn below the UI font.
#pragma once

#include <QColor>
#include <QRect>
#include <QString>
#include <QPainter>
#include <QPixmap>
#include <QWidget>
#include <cstdint>
#include <optional>
#include <vector>

#include "shardscope/core/rank_layout.h"

namespace shardscope::app {

class ClusterDiagram : public QWidget {
  Q_OBJECT

 public:
  explicit ClusterDiagram(QWidget* parent = nullptr);

  void setCluster(std::uint32_t nodes, std::uint32_t gpus_per_node);
  // The chosen grid: sharding group size M (nullopt: none) and its layout
  // (nullopt: the project leaves it open; drawn strided, TorchRec's default).
  void setGrid(std::optional<std::uint32_t> group_size, std::optional<core::RankLayout> layout);

  [[nodiscard]] std::uint32_t nodes() const { return nodes_; }
  [[nodiscard]] std::uint32_t gpusPerNode() const { return gpus_per_node_; }
  [[nodiscard]] std::uint32_t worldSize() const { return nodes_ * gpus_per_node_; }

  // R, the number of sharding groups drawn; 0 when no grid is drawn.
  [[nodiscard]] int groupCount() const { return group_count_; }
  // Sharding group of a global rank, and its rank inside that group; -1
  // without a drawn grid or for a rank outside the cluster.
  [[nodiscard]] int groupOfGpu(std::uint32_t global_rank) const;
  [[nodiscard]] int groupRankOfGpu(std::uint32_t global_rank) const;
  [[nodiscard]] QColor groupColor(int group) const;
  // "8 sharding groups of 8 GPUs (strided: one GPU per node per group)".
  [[nodiscard]] QString legendText() const { return legend_; }
  // The group drawn in full colour while the others fade (hovering a GPU
  // sets it; -1: none). In a 4,096-GPU strided grid it is the only way to
  // see where one group's GPUs are.
  [[nodiscard]] int highlightedGroup() const { return highlighted_group_; }
  void setHighlightedGroup(int group);

  // Nodes drawn at the current size; the rest are summed up as "… k more nodes".
  [[nodiscard]] std::uint32_t shownNodes() const { return geometry().shown; }
  // Side of one GPU cell in pixels at the current size.
  [[nodiscard]] int cellSize() const { return geometry().cell; }
  // Where a GPU is drawn (empty when it is not), and the GPU under a point.
  [[nodiscard]] QRect gpuRect(std::uint32_t global_rank) const;
  [[nodiscard]] std::optional<std::uint32_t> gpuAt(QPoint pos) const;

  [[nodiscard]] QSize sizeHint() const override;
  [[nodiscard]] QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;
  bool event(QEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void render(QPainter& painter) const;
  QPixmap cache_;  // the drawn diagram at the widget's size; null when stale
  // Where everything goes at the current size (see computeGeometry()).
  struct Geometry {
    int cell = 0;        // GPU cell side
    int inner_cols = 1;  // GPU cells per row inside a node box
    int inner_rows = 1;
    int gap_in = 1;   // between cells of a node
    int pad = 2;      // node box border to cells
    int label_h = 0;  // "node 3" line inside each box (0: none)
    int tile_w = 0;
    int tile_h = 0;
    int gap_out = 3;          // between node boxes
    int cols = 1;             // node boxes per row
    int gutter = 0;           // left column of row labels (0: none)
    int row_label_every = 1;  // label every k-th row in the gutter
    QPoint origin;            // top-left of the first node box
    std::uint32_t shown = 0;  // nodes drawn
    QRect more_rect;          // "… k more nodes" (empty: all drawn)
    QRect swatch_rect;        // the group colour key at the top (empty: none)
  };

  void updateGroups();
  // The layout for the current size, made on first use after a change (a
  // hidden widget gets no resize events).
  [[nodiscard]] const Geometry& geometry() const;
  void invalidateLayout() { layout_size_ = QSize(); }
  [[nodiscard]] Geometry computeGeometry() const;
  [[nodiscard]] QRect nodeRect(std::uint32_t node) const;
  [[nodiscard]] bool drawsSwatches() const;
  [[nodiscard]] QString toolTipFor(std::uint32_t global_rank) const;

  std::uint32_t nodes_ = 0;
  std::uint32_t gpus_per_node_ = 0;
  std::optional<std::uint32_t> group_size_;
  std::optional<core::RankLayout> layout_;
  int group_count_ = 0;
  // Per global rank: its sharding group and rank in the group (empty: no grid drawn).
  std::vector<std::uint32_t> group_of_;
  std::vector<std::uint32_t> group_rank_of_;
  QString legend_;
  int highlighted_group_ = -1;
  mutable Geometry geometry_;
  mutable QSize layout_size_;  // the size geometry_ was made for; invalid: stale
};

}  // namespace shardscope::app
