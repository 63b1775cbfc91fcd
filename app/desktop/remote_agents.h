// The agents the desktop knows (saved in QSettings group "agents") and its
// connections to them (docs/desktop/remote.md): one AgentClient per agent,
// owned here and shared by the Connections dialog, the Profile dialog's run
// targets and the Runs page's remote jobs. A token is never in QSettings in
// clear: an agent names a token file, or its token is remembered in
// $XDG_CONFIG_HOME/shardscope/agents/<host>_<port>.token (mode 0600).
// Everything is asynchronous: connect, the trust question, describe and
// list come back as signals.
#pragma once

#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::app {

namespace remote {
class AgentClient;
}

struct SavedAgent {
  QString address;          // "host:port" ("[v6]:port")
  QString label;            // "" : the address
  QString token_file;       // where the token is (its first line)
  bool remembered = false;  // token_file is the remembered token's file (removed with the agent)
  [[nodiscard]] QString displayName() const { return label.isEmpty() ? address : label; }
  bool operator==(const SavedAgent&) const = default;
};

// QSettings group "agents" (an array of address, label, token_file, remembered).
[[nodiscard]] QList<SavedAgent> loadSavedAgents();
void storeSavedAgents(const QList<SavedAgent>& agents);
// $XDG_CONFIG_HOME/shardscope/agents/<host>_<port>.token (next to known_agents).
[[nodiscard]] QString rememberedTokenPath(const QString& address);
// Writes `token` (one line) to `path` with mode 0600, the folder 0700.
[[nodiscard]] core::Status writeTokenFile(const QString& path, const QString& token);
// The token: the file's first line, trimmed; errors say what to do.
[[nodiscard]] core::Result<std::string> readTokenFile(const QString& path);
// Removes address's pin from the known_agents file: whether there was one.
[[nodiscard]] core::Result<bool> forgetFingerprint(const QString& address);
// The known_agents file pins go to.
[[nodiscard]] QString knownAgentsPath();

class RemoteAgents : public QObject {
  Q_OBJECT

 public:
  enum class State { Disconnected, Connecting, AskingTrust, Connected, Failed };
  struct Agent {
    SavedAgent saved;
    QPointer<remote::AgentClient> client;
    State state = State::Disconnected;
    QString message;  // the failure, when Failed
    std::optional<core::protocol::Description> description;
    std::vector<core::protocol::JobInfo> jobs;  // the last list
  };

  explicit RemoteAgents(QObject* parent = nullptr);
  ~RemoteAgents() override;

  // A token typed but not remembered: used for `address` until the app quits.
  void setSessionToken(const QString& address, const QString& token) { session_tokens_[address] = token; }
  // Connects (TrustPolicy::Ask) unless already connected; one connection per address.
  void connectAgent(const SavedAgent& agent);
  void disconnectAgent(const QString& address);
  void answerTrust(const QString& address, bool trust);
  // Lists the agent's jobs again: jobsListed.
  void refreshJobs(const QString& address);

  [[nodiscard]] const Agent* agent(const QString& address) const;
  // Connected and described, in the order they connected.
  [[nodiscard]] QStringList connectedAddresses() const;
  [[nodiscard]] remote::AgentClient* client(const QString& address) const;
  // "label (cluster, N GPUs)".
  [[nodiscard]] QString targetText(const QString& address) const;

 signals:
  void stateChanged(const QString& address);
  void trustQuestion(const QString& address, const QString& fingerprint);
  void connectionFailed(const QString& address, const QString& message);
  // Connected and described (the description is in agent()).
  void connected(const QString& address);
  void jobsListed(const QString& address);
  // A connected agent's connection went away.
  void disconnected(const QString& address);

 private:
  void onReady(const QString& address);
  void onFailed(const QString& address, const QString& message);
  void setState(const QString& address, State state, const QString& message = {});

  QMap<QString, Agent> agents_;
  QStringList order_;  // connected addresses, first connected first
  QMap<QString, QString> session_tokens_;
};

}  // namespace shardscope::app
