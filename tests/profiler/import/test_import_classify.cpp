// Kernel classification (docs/import.md): the built-in rules on real kernel
// names, NCCL collective names over kernel names, the user's rules file
// prepended, and its errors naming file, JSON path and expectation.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <string>

#include "shardscope/profiler/import/import_classify.h"

using namespace shardscope;
using profiler::KernelClass;

namespace {
const std::string kData = std::string(SHARDSCOPE_TEST_DATA_DIR) + "/import/";

std::string write(const QTemporaryDir& dir, const char* name, const std::string& text) {
  const std::string p = dir.filePath(name).toStdString();
  std::ofstream(p) << text;
  return p;
}
}  // namespace

class TestImportClassify : public QObject {
  Q_OBJECT

 private slots:
  void defaults_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("cls");
    QTest::newRow("tbe fwd") << "void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float>(...)"
                             << "emb_fwd";
    QTest::newRow("tbe fwd nobag") << "split_embedding_nobag_codegen_forward_unweighted_small_kernel"
                                   << "emb_fwd";
    QTest::newRow("tbe bwd") << "split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1"
                             << "emb_bwd";
    QTest::newRow("grad indice weights") << "split_embedding_codegen_grad_indice_weights_kernel"
                                         << "emb_bwd";
    QTest::newRow("nccl sendrecv") << "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
                                   << "all_to_all";
    QTest::newRow("nccl allreduce") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                    << "all_reduce";
    QTest::newRow("nccl old allreduce") << "ncclKernel_AllReduce_RING_LL_Sum_float"
                                        << "all_reduce";
    QTest::newRow("nccl reduce scatter") << "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"
                                         << "reduce_scatter";
    QTest::newRow("nccl all gather") << "ncclDevKernel_AllGather_RING_LL"
                                     << "all_gather";
    QTest::newRow("nccl broadcast") << "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                    << "broadcast";
    QTest::newRow("nccl reduce") << "ncclDevKernel_Reduce_Sum_f32_RING_LL"
                                 << "reduce";
    QTest::newRow("nccl old broadcast") << "ncclKernel_Broadcast_RING_LL_Sum_int8_t"
                                        << "broadcast";
    QTest::newRow("rocm tensile gemm") << "Cijk_Alik_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_APM1_ABV0_ACED0"
                                       << "dense";
    QTest::newRow("rocm tensile hgemm") << "Cijk_Ailk_Bjlk_HHS_BH_MT64x64x32_MI32x32x8x1_SN"
                                        << "dense";
    QTest::newRow("sgemm") << "ampere_sgemm_128x64_tn"
                           << "dense";
    QTest::newRow("cutlass") << "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"
                             << "dense";
    QTest::newRow("memcpy") << "Memcpy HtoD (Pageable -> Device)"
                            << "memory";
    QTest::newRow("elementwise") << "void at::native::vectorized_elementwise_kernel<4, ...>"
                                 << "other";
  }
  void defaults() {
    QFETCH(QString, name);
    QFETCH(QString, cls);
    profiler::KernelClassifier k;
    const auto got = k.classify(name.toStdString());
    QCOMPARE(QString::fromUtf8(profiler::toText(got).data()), cls);
    QVERIFY(k.classify(name.toStdString()) == got);  // cached answer is the same
  }

  void hugeNamesAreClassifiedByTheirStart() {
    // Names come straight from traces; a 200 KB template name must not
    // exhaust the regex matcher's stack.
    profiler::KernelClassifier k;
    const std::string tail(200'000, 'x');
    QVERIFY(k.classify("void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<" + tail) ==
            KernelClass::EmbFwd);
    QVERIFY(k.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(" + tail) == KernelClass::AllReduce);
    QVERIFY(k.classify(tail) == KernelClass::Other);
  }

  void collectiveNameWinsOverKernelName() {
    profiler::KernelClassifier k;
    // An all-to-all runs as SendRecv; a send/recv kernel named generically.
    QVERIFY(k.classify("ncclDevKernel_Generic", "all_to_allv") == KernelClass::AllToAll);
    QVERIFY(k.classify("ncclDevKernel_SendRecv(...)", "send") == KernelClass::SendRecv);
    QVERIFY(k.classify("ncclDevKernel_Generic", "_allgather_base") == KernelClass::AllGather);
    QVERIFY(k.classify("ncclDevKernel_Generic", "reduce_scatter_tensor_coalesced") == KernelClass::ReduceScatter);
    QVERIFY(k.classify("ncclDevKernel_SendRecv(...)", "allreduce") == KernelClass::AllReduce);
    // nsys derives "send_recv" from the kernel name: not authoritative, SendRecv carries all-to-alls.
    QVERIFY(k.classify("ncclDevKernel_SendRecv(...)", "send_recv") == KernelClass::AllToAll);
    QVERIFY(k.classify("ncclDevKernel_Generic", "recv") == KernelClass::SendRecv);
    // Broadcast and reduce are collectives of their own, not all-reduces.
    QVERIFY(k.classify("ncclDevKernel_Generic", "broadcast") == KernelClass::Broadcast);
    QVERIFY(k.classify("ncclDevKernel_Generic", "reduce") == KernelClass::Reduce);
    QVERIFY(k.classify("ncclDevKernel_SendRecv(...)", "gather") == KernelClass::SendRecv);
    // Unrecognised collective names fall back to the kernel name.
    QVERIFY(k.classify("ncclDevKernel_SendRecv(...)", "mystery") == KernelClass::AllToAll);
  }

  void userRulesComeFirst() {
    auto k = profiler::KernelClassifier::fromFile(kData + "rules.json");
    QVERIFY2(k.ok(), k.ok() ? "" : k.error().message.c_str());
    QVERIFY(k->classify("ampere_sgemm_128x64_tn") == KernelClass::EmbFwd);
    QVERIFY(k->classify("ampere_hgemm_128x64_tn") == KernelClass::Dense);  // defaults still apply
    QCOMPARE(k->ruleCount(), profiler::defaultClassifyRules().size() + 1);
  }

  void badRulesFiles_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << "{rules"
                              << "not valid JSON";
    QTest::newRow("schema") << R"({"schema": "x", "rules": []})"
                            << "/schema: expected \"shardscope.classify/1\"";
    QTest::newRow("rules") << R"({"schema": "shardscope.classify/1"})"
                           << "/rules: expected an array";
    QTest::newRow("class") << R"({"schema": "shardscope.classify/1", "rules": [{"pattern": "a", "class": "gpu"}]})"
                           << "/rules/0/class: expected one of emb_fwd";
    QTest::newRow("pattern") << R"({"schema": "shardscope.classify/1", "rules": [{"class": "dense"}]})"
                             << "/rules/0/pattern: expected a non-empty string";
    QTest::newRow("duplicate key") << R"({"schema": "shardscope.classify/1", "rules": [], "rules": []})"
                                   << "/rules: duplicate key \"rules\"";
    QTest::newRow("1e400") << R"({"schema": "shardscope.classify/1", "rules": [{"pattern": "a", "class": 1e400}]})"
                           << "(/rules/0/class): number overflow parsing '1e400'";
    QTest::newRow("empty") << ""
                           << "the file is empty";
  }
  void badRulesFiles() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string p = write(dir, "rules.json", text.toStdString());
    auto k = profiler::KernelClassifier::fromFile(p);
    QVERIFY(!k.ok());
    QVERIFY2(k.error().message.find(expected.toStdString()) != std::string::npos, k.error().message.c_str());
    QVERIFY2(k.error().message.starts_with(p + ": "), k.error().message.c_str());
  }

  void invalidRegexNamesItsPath() {
    auto k = profiler::KernelClassifier::fromFile(kData + "bad_rules.json");
    QVERIFY(!k.ok());
    QVERIFY2(
        k.error().message.find("bad_rules.json: /rules/1/pattern: invalid regular expression") != std::string::npos,
        k.error().message.c_str());
  }

  void classNamesRoundTrip() {
    for (auto c : {KernelClass::EmbFwd, KernelClass::EmbBwd, KernelClass::AllToAll, KernelClass::AllReduce,
                   KernelClass::ReduceScatter, KernelClass::AllGather, KernelClass::SendRecv, KernelClass::Broadcast,
                   KernelClass::Reduce, KernelClass::Dense, KernelClass::Memory, KernelClass::Other}) {
      auto back = profiler::kernelClassFromText(profiler::toText(c));
      QVERIFY(back.has_value());
      QVERIFY(*back == c);
    }
    QVERIFY(!profiler::kernelClassFromText("gpu").has_value());
  }
};

QTEST_GUILESS_MAIN(TestImportClassify)
#include "test_import_classify.moc"
