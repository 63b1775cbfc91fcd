// The agent under load: N clients at once (threads, each its own TLS
// connection) each send describe + list `rounds` times, one request at a
// time, and time every answer; the baseline is one client doing the same in
// the same run. Every answer is checked (type and id), so an error counts.
// Also fetches a finished emulate run in 4 MiB chunks and checks its SHA-256
// against the agent's file. Usage: bench_agent_load [clients=50] [rounds=100]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include <QCoreApplication>

#include "agent_harness.h"

using namespace agent_test;

namespace {
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

void report(const char* what, const Latencies& l, double seconds) {
  std::printf("%-22s requests %6zu  errors %d  p50 %.2f ms  p99 %.2f ms  max %.2f ms  %.0f req/s\n", what, l.ms.size(),
              l.errors, percentile(l.ms, 0.5), percentile(l.ms, 0.99),
              l.ms.empty() ? 0.0 : *std::max_element(l.ms.begin(), l.ms.end()),
              static_cast<double>(l.ms.size()) / seconds);
}
}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const int clients = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 100;
  Agent agent;
  // All clients come from 127.0.0.1 and begin TLS at once.
  agent.config()["limits"]["max_handshakes_per_address"] = std::max(64, clients);
  if (!agent.start()) {
    std::fprintf(stderr, "the agent did not start:\n%s\n", qPrintable(agent.output()));
    return 1;
  }
  {  // a few finished jobs, so list has something to say
    RawClient c;
    c.connect(agent.port());
    c.hello(agent.token());
    for (int i = 0; i < 3; ++i) {
      auto r = c.request({{"type", "submit"}, {"job", jobSpec("emulate", 2, "bench " + std::to_string(i))}});
      if (r && (*r)["type"] == "job") watchToEnd(c, (*r)["job"]["job"].get<std::string>());
    }
    QElapsedTimer t;
    t.start();
    auto fetched = fetchAll(c, "j1", 4u << 20);
    const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    QFile f(agent.path("store/jobs/j1/run.sqlite"));
    (void)f.open(QIODevice::ReadOnly);
    const std::string local = sha256Hex(f.readAll());
    std::printf("fetch j1: %lld bytes in %.1f ms, sha256 %s, %s\n",
                fetched ? static_cast<long long>(fetched->first.size()) : -1LL, ms, local.substr(0, 16).c_str(),
                fetched && sha256Hex(fetched->first) == local && fetched->second == local ? "identical to the agent's"
                                                                                          : "DIFFERENT");
  }
  QElapsedTimer t;
  t.start();
  const Latencies base = concurrently(agent.port(), agent.token(), 1, rounds);
  report("1 client (baseline)", base, static_cast<double>(t.nsecsElapsed()) / 1e9);
  t.restart();
  const Latencies load = concurrently(agent.port(), agent.token(), clients, rounds);
  char what[64];
  std::snprintf(what, sizeof what, "%d clients", clients);
  report(what, load, static_cast<double>(t.nsecsElapsed()) / 1e9);
  std::printf("p99 ratio %d clients / 1 client: %.1fx; bar: p99 < 50 ms, no errors: %s\n", clients,
              percentile(load.ms, 0.99) / std::max(1e-9, percentile(base.ms, 0.99)),
              percentile(load.ms, 0.99) < 50 && load.errors == 0 ? "met" : "NOT MET");
  agent.stop();
  return load.errors == 0 ? 0 : 1;
}
