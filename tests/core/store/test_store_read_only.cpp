// Stores in a folder the user cannot write (a read-only share, read-only
// media, another user's folder): reading works wherever SQLite can read the
// data without creating files, writing fails as an I/O error, and nothing
// is called corrupt. The folders are chmod 555 and the reads run in a
// child process (store_probe); when the tests run as root, for whom
// permission bits do not stop writes, the child drops to user nobody, so
// the kernel refuses every file creation as it would on read-only media.
#include <sys/types.h>
#include <unistd.h>

#include <grp.h>

#include <QProcess>
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

struct Probe {
  int code = -1;
  QString out, err;
};

// store_probe as a user who cannot write the folder.
Probe probe(const QStringList& args) {
  QProcess p;
  p.setChildProcessModifier([] {
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0)) {
      _exit(77);
    }
  });
  p.start(QStringLiteral(SHARDSCOPE_STORE_PROBE), args);
  if (!p.waitForFinished(30'000)) {
    return {};
  }
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

std::vector<std::string> listFolder(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void setWritable(const fs::path& dir, bool writable) {
  fs::permissions(dir, writable ? fs::perms(0755) : fs::perms(0555), fs::perm_options::replace);
}

}  // namespace

class TestStoreReadOnly : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  int counter_ = 0;
  std::vector<fs::path> folders_;

  fs::path newFolder() {
    const fs::path dir = fs::path(dir_.path().toStdString()) / std::string("f").append(std::to_string(++counter_));
    fs::create_directory(dir);
    folders_.push_back(dir);
    return dir;
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    fs::permissions(dir_.path().toStdString(), fs::perms(0755), fs::perm_options::replace);
    // The means of these tests: the probe cannot create a file in a 555 folder.
    const fs::path dir = newFolder();
    setWritable(dir, false);
    const Probe p = probe({"write", QString::fromStdString((dir / "new.db").string())});
    QVERIFY2(p.code != 77, "could not run the probe as user nobody");
    QVERIFY2(p.code == 1, qPrintable(p.out + p.err));
    QVERIFY2(p.err.startsWith("error i/o: "), qPrintable(p.err));
    QVERIFY2(p.err.contains("cannot be created"), qPrintable(p.err));
    QVERIFY(listFolder(dir).empty());
  }

  void cleanupTestCase() {
    for (const auto& dir : folders_) {
      setWritable(dir, true);
    }
  }

  // A store closed cleanly has no -wal or -shm; SQLite cannot create them
  // here, so the store is read as immutable: all its data is in the file.
  void closedStoreInAReadOnlyFolderIsRead() {
    const fs::path dir = newFolder();
    const fs::path path = dir / "closed.db";
    writeSampleRun(path, 2, 500, true, "one");
    writeSampleRun(path, 2, 500, false, "two");  // still 'running': dropped without finish
    QCOMPARE(listFolder(dir), std::vector<std::string>{"closed.db"});
    setWritable(dir, false);
    const Probe p = probe({"info", QString::fromStdString(path.string())});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    QCOMPARE(p.out.trimmed(), QStringLiteral("runs 2 complete 1"));
    QCOMPARE(listFolder(dir), std::vector<std::string>{"closed.db"});

    const Probe rw = probe({"open-rw", QString::fromStdString(path.string())});
    QCOMPARE(rw.code, 1);
    QVERIFY2(rw.err.startsWith("error i/o: "), qPrintable(rw.err));
    QVERIFY2(!rw.err.contains("corrupt"), qPrintable(rw.err));
    const Probe w = probe({"write", QString::fromStdString(path.string())});
    QCOMPARE(w.code, 1);
    QVERIFY2(w.err.startsWith("error i/o: "), qPrintable(w.err));
    QVERIFY2(!w.err.contains("corrupt"), qPrintable(w.err));
    QCOMPARE(listFolder(dir), std::vector<std::string>{"closed.db"});
    setWritable(dir, true);
    QVERIFY(st::verifyStore(path).ok());
  }

  // A store whose writer is still at work (or died) has a -wal with data not
  // yet in the main file, and its -shm index: SQLite reads both read-only.
  void storeWithItsLogAndIndexInAReadOnlyFolderIsRead() {
    const fs::path dir = newFolder();
    const fs::path path = dir / "live.db";
    writeSampleRun(path, 2, 500, true, "finished");
    auto writer = st::RunWriter::begin(path, {});  // keeps the WAL and its index open
    QVERIFY(writer.ok());
    const auto name = writer->intern("x");
    QVERIFY(writer->addSpan(span(0, 0, *name, 0, 10)).ok());
    QVERIFY(writer->commit().ok());
    QVERIFY(fs::file_size(path.string() + "-wal") > 0);
    setWritable(dir, false);
    const Probe p = probe({"info", QString::fromStdString(path.string())});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    QCOMPARE(p.out.trimmed(), QStringLiteral("runs 2 complete 1"));
    setWritable(dir, true);
    QVERIFY(writer->finish().ok());
  }

  // A -wal without its -shm (copied without it): the data in the log cannot
  // be read without creating the index, and reading the main file alone
  // would show an older store. Refused, saying why and what to do.
  void logWithoutItsIndexInAReadOnlyFolderIsRefusedNotCorrupt() {
    const fs::path source = newFolder() / "source.db";
    writeSampleRun(source, 2, 500, true, "finished");
    auto writer = st::RunWriter::begin(source, {});
    QVERIFY(writer.ok());
    QVERIFY(writer->commit().ok());
    const fs::path dir = newFolder();
    const fs::path path = dir / "copied.db";
    fs::copy_file(source, path);
    fs::copy_file(source.string() + "-wal", path.string() + "-wal");
    QVERIFY(writer->finish().ok());
    setWritable(dir, false);
    const Probe p = probe({"info", QString::fromStdString(path.string())});
    QCOMPARE(p.code, 1);
    QVERIFY2(p.err.startsWith("error i/o: "), qPrintable(p.err));
    QVERIFY2(p.err.contains("copied.db-wal"), qPrintable(p.err));
    QVERIFY2(p.err.contains("read-only"), qPrintable(p.err));
    QVERIFY2(!p.err.contains("corrupt"), qPrintable(p.err));
    setWritable(dir, true);
    // Where the index can be created, the same files read whole.
    auto info = st::inspectStore(path);
    QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
    QCOMPARE(info->runs.size(), std::size_t{2});
  }

  // A folder on the way that the user may not enter: the store is not
  // "missing", and Create makes nothing there.
  void storeBehindAFolderTheUserCannotEnterIsAnIoError() {
    const fs::path dir = newFolder();
    const fs::path path = dir / "hidden.db";
    writeSampleRun(path, 1, 10);
    fs::permissions(dir, fs::perms::none, fs::perm_options::replace);
    const Probe p = probe({"info", QString::fromStdString(path.string())});
    QCOMPARE(p.code, 1);
    QVERIFY2(p.err.startsWith("error i/o: "), qPrintable(p.err));
    QVERIFY2(p.err.contains("cannot be accessed"), qPrintable(p.err));
    const Probe w = probe({"write", QString::fromStdString(path.string())});
    QCOMPARE(w.code, 1);
    QVERIFY2(w.err.contains("cannot be accessed"), qPrintable(w.err));
    setWritable(dir, true);
    QCOMPARE(listFolder(dir), std::vector<std::string>{"hidden.db"});
    QCOMPARE(openOrDie(path).listRuns()->size(), std::size_t{1});
  }
};

QTEST_GUILESS_MAIN(TestStoreReadOnly)
#include "test_store_read_only.moc"
