// The agent's parts that run beside its jobs, without an agent: the ledger of
// the running jobs' resident memory, a job's process limits, the progress
// throttle, the token file and its comparison, and the describe answer.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <fstream>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/agent/agent_describe.h"
#include "shardscope/profiler/agent/agent_token.h"
#include "shardscope/profiler/agent/job_limits.h"
#include "shardscope/profiler/agent/progress_throttle.h"

using namespace shardscope;
namespace proto = core::protocol;

namespace {

profiler::AgentConfig config() {
  profiler::AgentConfig c;
  c.limits.job_memory_bytes = std::uint64_t{1} << 30;
  c.limits.total_memory_bytes = std::uint64_t{2} << 30;
  c.limits.job_threads = 4;
  c.limits.job_seconds = 90;
  return c;
}

std::string writeToken(const QTemporaryDir& dir, const std::string& text, mode_t mode) {
  const std::string path = (dir.path() + "/token").toStdString();
  std::ofstream(path, std::ios::trunc) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

}  // namespace

class TestAgentRuntime : public QObject {
  Q_OBJECT

 private slots:
  void theNewestJobStopsWhenTogetherTheyPassTheTotal() {
    profiler::ResidentLedger ledger(1000);
    ledger.add("j1");
    ledger.add("j2");
    QVERIFY(ledger.sample("j1", 600).empty());
    QVERIFY(ledger.sample("j2", 300).empty());
    QVERIFY(ledger.sample("j1", 800).empty());  // over the total, but j1 was there first
    const std::string reason = ledger.sample("j2", 300);
    QVERIFY2(reason.find("limits.total_memory_bytes") != std::string::npos, reason.c_str());
    QVERIFY(reason.find("the newest was stopped") != std::string::npos);
    ledger.remove("j2");
    QVERIFY(ledger.sample("j1", 900).empty());
    QVERIFY(ledger.sample("j9", 5000).empty());  // not running: nothing to stop
  }

  void aJobsLimitsFollowItsModeAndDevice() {
    auto ledger = std::make_shared<profiler::ResidentLedger>(100);
    proto::JobSpec spec;
    const profiler::ProcessLimits cpu = profiler::jobProcessLimits(config(), spec, "j1", ledger);
    QCOMPARE(cpu.resident_bytes, std::uint64_t{1} << 30);
    QCOMPARE(cpu.resident_name, std::string("limits.job_memory_bytes"));
    QCOMPARE(cpu.wall, std::chrono::seconds(90));
    QVERIFY(cpu.die_with_caller);
    const std::uint64_t backstop =
        (std::uint64_t{1} << 30) + profiler::kJobAddressSpaceBase + 4 * profiler::kJobAddressSpacePerThread;
    QCOMPARE(cpu.address_space_bytes, profiler::kJobAddressSpaceBackstop ? backstop : std::uint64_t{0});
    ledger->add("j1");
    QVERIFY(cpu.sample && !cpu.sample(1000).empty());  // every sample goes to the ledger
    spec.device = proto::JobDevice::Cuda;
    QCOMPARE(profiler::jobProcessLimits(config(), spec, "j1", ledger).address_space_bytes, std::uint64_t{0});
    spec.device = proto::JobDevice::Cpu;
    spec.mode = proto::JobMode::Mpi;  // a launcher: no address-space limit to pass on
    const profiler::ProcessLimits mpi = profiler::jobProcessLimits(config(), spec, "j1", nullptr);
    QCOMPARE(mpi.address_space_bytes, std::uint64_t{0});
    QVERIFY(!mpi.sample);
  }

  void progressGoesOutAtMostOncePerInterval() {
    using Clock = profiler::ProgressThrottle::Clock;
    profiler::ProgressThrottle t;
    const Clock::time_point start = Clock::now();
    QVERIFY(t.admit(false, start));
    QVERIFY(!t.admit(false, start + std::chrono::milliseconds(10)));
    QVERIFY(t.admit(true, start + std::chrono::milliseconds(20)));  // a new stage always
    QVERIFY(!t.admit(false, start + std::chrono::milliseconds(60)));
    QVERIFY(t.admit(false, start + std::chrono::milliseconds(20) + profiler::kProgressInterval));
  }

  void tokensCompareWhole() {
    QVERIFY(profiler::tokenMatches("0123456789abcdef", "0123456789abcdef"));
    QVERIFY(!profiler::tokenMatches("0123456789abcdeX", "0123456789abcdef"));
    QVERIFY(!profiler::tokenMatches("0123456789abcdef0", "0123456789abcdef"));
    QVERIFY(!profiler::tokenMatches("", "0123456789abcdef"));
  }

  void theTokenFileMustBeTheUsersOwnAndLongEnough() {
    QTemporaryDir dir;
    auto t = profiler::readTokenFile((dir.path() + "/none").toStdString());
    QVERIFY(!t && t.error().kind == core::ErrorKind::Usage);
    QVERIFY(t.error().message.find("does not exist") != std::string::npos);
    t = profiler::readTokenFile(writeToken(dir, "0123456789abcdef0123 \r\nsecond line\n", 0644));
    QVERIFY(!t);
    QVERIFY2(t.error().message.find("chmod 600") != std::string::npos, t.error().message.c_str());
    t = profiler::readTokenFile(writeToken(dir, "short\n", 0600));
    QVERIFY(!t);
    QVERIFY(t.error().message.find("use at least 16") != std::string::npos);
    t = profiler::readTokenFile(writeToken(dir, std::string(proto::kMaxTokenBytes + 1, 'x'), 0600));
    QVERIFY(!t);
    t = profiler::readTokenFile(writeToken(dir, "0123456789abcdef0123 \r\nsecond line\n", 0600));
    QVERIFY2(t, t ? "" : t.error().message.c_str());
    QCOMPARE(*t, std::string("0123456789abcdef0123"));
    t = profiler::readTokenFile(dir.path().toStdString());
    QVERIFY(!t);
  }

  void describeSaysWhatJobsMayAskAndTake() {
    profiler::AgentConfig c = config();
    core::ClusterSpec cluster = core::loadCluster(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json").value();
    cluster.nodes = 2;
    c.limits.max_ranks = 4;
    proto::Description d = profiler::describeAgent(c, cluster);
    QCOMPARE(d.modes, std::vector<std::string>{"emulate"});
    QCOMPARE(d.launcher, std::string("emulate-only"));
    QCOMPARE(d.cluster, cluster);
    QCOMPARE(d.max_ranks, 4u);
    QCOMPARE(d.shapes.size(), std::size_t{1});  // one node of four within max_ranks
    QCOMPARE(d.job_limits, (proto::JobLimits{std::uint64_t{1} << 30, std::uint64_t{2} << 30, 4, 90}));
    QCOMPARE(d.hosts.size(), std::size_t{1});
    QVERIFY(d.agent.starts_with("shardscope-agent "));
    c.launcher = profiler::LauncherKind::Sbatch;
    d = profiler::describeAgent(c, cluster);
    QCOMPARE(d.modes, (std::vector<std::string>{"emulate", "mpi"}));
    QCOMPARE(d.launcher, std::string("sbatch"));
  }
};

QTEST_GUILESS_MAIN(TestAgentRuntime)
#include "test_agent_runtime.moc"
