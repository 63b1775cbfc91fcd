// placeholder: being written
#include <QtTest>
class TestEmbeddingKernels : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestEmbeddingKernels)
#include "test_embedding_kernels.moc"
