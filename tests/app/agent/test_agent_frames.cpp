// shardscope-agent on loopback against frames no client should send: one
// byte that is not JSON, bytes that are not UTF-8 inside a JSON string,
// bodies that are not objects, a type or id of the wrong kind, nesting past
// the limit, labels with bidirectional overrides, a malformed hello holding
// the token. Each gets an error (and, where the stream cannot be trusted,
// a close) on its own connection; the agent stays alive for everyone else,
// and its log names each connection's outcome without the token.
#include <QtTest>

#include "agent_harness.h"
#include "shardscope/core/protocol/safe_text.h"

using namespace agent_test;

namespace {

QByteArray frame(const QByteArray& body) { return rawFrame(body); }

// A hello's body with its members' text as given (any bytes), `tail` after the token's.
QByteArray rawHello(const QByteArray& id, const QByteArray& client, const QByteArray& token,
                    const QByteArray& tail = "\"}") {
  return "{\"v\":1,\"type\":\"hello\",\"id\":" + id + ",\"client\":\"" + client + "\",\"token\":\"" + token + tail;
}

QByteArray nested(int depth) {
  return R"({"v":1,"type":"describe","id":2,"x":)" + QByteArray(depth, '[') + QByteArray(depth, ']') + "}";
}

QByteArray submitWithLabel(const std::string& label) {
  return QByteArray::fromStdString(
      json{{"v", 1}, {"type", "submit"}, {"id", 2}, {"job", jobSpec("emulate", 1, label)}}.dump(
          -1, ' ', false, json::error_handler_t::strict));
}

QByteArray submitWithModelName(const std::string& name) {
  json spec = jobSpec("emulate", 1);
  spec["project"]["model"]["name"] = name;
  return QByteArray::fromStdString(json{{"v", 1}, {"type", "submit"}, {"id", 2}, {"job", spec}}.dump());
}

// Every line of `text` is safe to show (safe_text.h).
bool safeLines(const std::string& text) {
  for (std::size_t at = 0, end = 0; at <= text.size(); at = end + 1) {
    end = std::min(text.find('\n', at), text.size());
    if (proto::findUnsafe(std::string_view(text).substr(at, end - at))) return false;
  }
  return true;
}

}  // namespace

class TestAgentFrames : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<Agent> agent_;
  std::unique_ptr<RawClient> bystander_;  // authenticated before every test, kept throughout

  // The bystander is still served, and a new client can hello and describe.
  bool alive() {
    auto d = bystander_->request({{"type", "describe"}});
    if (!d || (*d)["type"] != "description") return false;
    RawClient c;
    if (!c.connect(agent_->port())) return false;
    auto w = c.hello(agent_->token());
    if (!w || (*w)["type"] != "welcome") return false;
    auto again = c.request({{"type", "describe"}});
    return again && (*again)["type"] == "description";
  }

  // Waits up to 10 s for `line` in the agent's log.
  bool logged(const QString& line) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 10000) {
      if (agent_->output().contains(line)) return true;
      QTest::qWait(50);
    }
    return false;
  }

  static QString peerOf(RawClient& c) { return "client 127.0.0.1:" + QString::number(c.socket().localPort()); }

 private slots:
  void initTestCase() {
    agent_ = std::make_unique<Agent>();
    agent_->config()["limits"] = {{"handshake_seconds", 3}};
    QVERIFY2(agent_->start(), qPrintable(agent_->output()));
    bystander_ = std::make_unique<RawClient>();
    QVERIFY(bystander_->connect(agent_->port()));
    auto w = bystander_->hello(agent_->token());
    QVERIFY(w && (*w)["type"] == "welcome");
  }

  void cleanupTestCase() {
    bystander_.reset();
    agent_.reset();
  }

  void oneByteThatIsNotJsonEndsOnlyItsConnection() {
    RawClient c;
    QVERIFY(c.connect(agent_->port()));
    const QString peer = peerOf(c);
    c.sendRaw(QByteArray("\x00\x00\x00\x01\xff", 5));
    auto r = c.receive(5000);
    QVERIFY(r);
    QCOMPARE((*r)["code"], "bad_frame");
    const std::string message = (*r)["message"].get<std::string>();
    QVERIFY2(message.find("'\\xFF'") != std::string::npos, message.c_str());  // quoted, escaped
    QVERIFY(c.closedWithin(5000));
    QVERIFY(alive());
    QVERIFY2(logged(peer + ": bad frame (agent protocol frame: not valid JSON"), qPrintable(agent_->output()));
    QVERIFY(logged(peer + ": closed"));
  }

  void badFramesAndMessages_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("hello_first");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("path");  // the error's path, when it names one
    QTest::addColumn<bool>("closes");
    const QByteArray token = QByteArray::fromStdString(agent_->token());
    // Bytes that are not UTF-8 inside a JSON string: the parser refuses the frame.
    QTest::newRow("not UTF-8 in hello") << rawHello("1", "a\xc3\x28", token) << false << "bad_frame"
                                        << "" << true;
    QTest::newRow("not UTF-8 after hello")
        << QByteArray("{\"v\":1,\"type\":\"describe\",\"id\":2,\"x\":\"\xed\xa0\x80\xff\"}") << true << "bad_frame"
        << "" << true;
    QTest::newRow("lone surrogate escape")
        << QByteArray("{\"v\":1,\"type\":\"describe\",\"id\":2,\"x\":\"\\ud800\"}") << true << "bad_frame"
        << "" << true;
    // Bodies that are JSON but not a message.
    QTest::newRow("array") << QByteArray("[]") << false << "bad_frame"
                           << "/" << true;
    QTest::newRow("null") << QByteArray("null") << false << "bad_frame"
                          << "/" << true;
    QTest::newRow("number") << QByteArray("42") << false << "bad_frame"
                            << "/" << true;
    QTest::newRow("array after hello") << QByteArray("[]") << true << "bad_frame"
                                       << "/" << true;
    QTest::newRow("type a number") << QByteArray(R"({"v":1,"type":7,"id":1})") << false << "bad_frame"
                                   << "/type" << true;
    QTest::newRow("type an object") << QByteArray(R"({"v":1,"type":{"a":1},"id":2})") << true << "bad_frame"
                                    << "/type" << true;
    QTest::newRow("nested too deep") << nested(200) << true << "bad_frame"
                                     << "" << true;
    QTest::newRow("nested too deep before hello") << nested(5000) << false << "bad_frame"
                                                  << "" << true;
    // A request id of the wrong kind: that request is refused, the connection stays.
    QTest::newRow("id a string") << QByteArray(R"({"v":1,"type":"describe","id":"7"})") << true << "bad_message"
                                 << "/id" << false;
    QTest::newRow("id negative") << QByteArray(R"({"v":1,"type":"describe","id":-1})") << true << "bad_message"
                                 << "/id" << false;
    QTest::newRow("id a float") << QByteArray(R"({"v":1,"type":"list","id":1.5})") << true << "bad_message"
                                << "/id" << false;
    QTest::newRow("id past 2^53") << QByteArray(R"({"v":1,"type":"list","id":9007199254740993})") << true
                                  << "bad_message"
                                  << "/id" << false;
    QTest::newRow("hello id a string") << rawHello("\"1\"", "x", token) << false << "bad_message"
                                       << "/id" << true;
    QTest::newRow("type with escape codes")
        << QByteArray("{\"v\":1,\"type\":\"\\u001b[2J\\u202e\",\"id\":2}") << true << "unknown_type"
        << "" << false;
    // Labels and names every client is shown.
    QTest::newRow("label with a bidi override") << submitWithLabel("invoice\u202Etxt.exe") << true << "invalid_job"
                                                << "/job/label" << false;
    QTest::newRow("label with an isolate") << submitWithLabel("a\u2067b") << true << "invalid_job"
                                           << "/job/label" << false;
    QTest::newRow("label with a C1 control") << submitWithLabel("a\u0085b") << true << "invalid_job"
                                             << "/job/label" << false;
    QTest::newRow("label with an escape") << submitWithLabel("a\x1b[31mb") << true << "invalid_job"
                                          << "/job/label" << false;
    QTest::newRow("model name with a bidi mark") << submitWithModelName("m\u200F") << true << "invalid_job"
                                                 << "/job/project/model/name" << false;
  }

  void badFramesAndMessages() {
    QFETCH(QByteArray, body);
    QFETCH(bool, hello_first);
    QFETCH(QString, code);
    QFETCH(QString, path);
    QFETCH(bool, closes);
    RawClient c;
    QVERIFY(c.connect(agent_->port()));
    if (hello_first) {
      auto w = c.hello(agent_->token());
      QVERIFY(w && (*w)["type"] == "welcome");
    }
    c.sendRaw(frame(body));
    auto r = c.receive(5000);
    QVERIFY(r);  // whole frames of valid JSON: the harness's decoder checks
    QCOMPARE((*r)["type"], "error");
    QCOMPARE(QString::fromStdString((*r)["code"].get<std::string>()), code);
    if (!path.isEmpty()) QCOMPARE(QString::fromStdString(r->value("path", "")), path);
    const std::string message = (*r)["message"].get<std::string>();
    QVERIFY2(safeLines(message), message.c_str());
    if (closes) {
      QVERIFY(c.closedWithin(5000));
    } else {
      auto d = c.request({{"type", "describe"}});
      QVERIFY(d);
      QCOMPARE((*d)["type"], "description");
    }
    QVERIFY(alive());
  }

  void escapeCodesInATypeAreQuoted() {
    RawClient c;
    QVERIFY(c.connect(agent_->port()));
    QVERIFY(c.hello(agent_->token()));
    c.sendRaw(frame("{\"v\":1,\"type\":\"\\u001b[2J\\u202eevil\",\"id\":2}"));
    auto r = c.receive(5000);
    QVERIFY(r);
    const std::string message = (*r)["message"].get<std::string>();
    QVERIFY2(message.find("\\x1B[2J\\u{202E}evil") != std::string::npos, message.c_str());
  }

  void theLogNamesEachOutcomeAndNeverTheToken() {
    RawClient good;
    QVERIFY(good.connect(agent_->port()));
    QVERIFY(good.hello(agent_->token()));
    QVERIFY(logged(peerOf(good) + ": authenticated (agent test)"));
    const QString good_peer = peerOf(good);
    good.disconnect();
    QVERIFY(logged(good_peer + ": closed"));

    RawClient wrong;
    QVERIFY(wrong.connect(agent_->port()));
    auto r = wrong.hello("not-the-token-at-all-0000000000");
    QVERIFY(r && (*r)["code"] == "auth_failed");
    QVERIFY(logged(peerOf(wrong) + ": wrong token"));

    RawClient silent;
    QVERIFY(silent.connect(agent_->port()));
    const QString silent_peer = peerOf(silent);
    QVERIFY(silent.closedWithin(10000));
    QVERIFY(logged(silent_peer + ": no hello within 3 s"));

    // A hello whose token string ends in a bad escape: the parser's message would quote the token.
    RawClient broken;
    QVERIFY(broken.connect(agent_->port()));
    broken.sendRaw(frame(rawHello("1", "x", QByteArray::fromStdString(agent_->token()), "\\q\"}")));
    auto b = broken.receive(5000);
    QVERIFY(b && (*b)["code"] == "bad_frame");
    QVERIFY(logged(peerOf(broken) + ": bad frame ("));
    QVERIFY(alive());
    const QString log = agent_->output();
    QVERIFY(!log.contains(QString::fromStdString(agent_->token())));
    QVERIFY(!log.contains("internal error"));
  }
};

QTEST_GUILESS_MAIN(TestAgentFrames)
#include "test_agent_frames.moc"
