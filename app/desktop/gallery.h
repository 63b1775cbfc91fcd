// Every page and dialog of the window rendered to PNG at the sizes people
// use (`shardscope [file] --gallery DIR`, scripts/gallery): the Measured,
// Timeline and Collectives pages once per run of the store, the dialogs at
// their own size. What can be checked on the images' widgets is checked
// and reported, so a gallery run also says what a reader would see.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::app {

class MainWindow;

inline const std::vector<QSize> kGallerySizes = {QSize(1280, 800), QSize(1920, 1080)};

struct GalleryReport {
  QStringList images;  // paths written
  QStringList checks;  // "ok: ..." or "FAIL: ..." lines
  [[nodiscard]] bool failed() const;
};

// Renders `window` (its project planned, its store listed) into `dir` as
// `<prefix>-<page>[-run<id>]-<W>x<H>.png` and `<prefix>-dialog-<name>.png`.
// `runs`: the runs to show on the run pages (empty: the store's newest complete run only).
[[nodiscard]] core::Result<GalleryReport> renderGallery(MainWindow& window, const QString& dir, const QString& prefix,
                                                        const std::vector<qint64>& runs);

}  // namespace shardscope::app
