// What Help > About says: version, a paragraph on what ShardScope does, and
// how this binary was built (Qt version, CUDA and MPI compiled in or not).
#pragma once

#include <QString>

class QWidget;

namespace shardscope::app {

// Plain-text build line, e.g. "Qt 6.4.2 (runtime 6.4.2), CUDA: no, MPI: no".
[[nodiscard]] QString buildInfoText();
// Rich text for the About box.
[[nodiscard]] QString aboutText();

void showAboutDialog(QWidget* parent);

}  // namespace shardscope::app
