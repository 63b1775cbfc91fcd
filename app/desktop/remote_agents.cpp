#include "remote_agents.h"

#include <sys/stat.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>

#include "agent_client.h"
#include "project_files.h"
#include "shardscope/core/protocol/job_spec.h"
#include "shardscope/core/protocol/known_agents.h"

namespace shardscope::app {

namespace proto = core::protocol;

QList<SavedAgent> loadSavedAgents() {
  QSettings settings;
  QList<SavedAgent> agents;
  const int n = settings.beginReadArray(QStringLiteral("agents"));
  for (int i = 0; i < n; ++i) {
    settings.setArrayIndex(i);
    SavedAgent a;
    a.address = settings.value(QStringLiteral("address")).toString();
    a.label = settings.value(QStringLiteral("label")).toString();
    a.token_file = settings.value(QStringLiteral("token_file")).toString();
    a.remembered = settings.value(QStringLiteral("remembered"), false).toBool();
    if (!a.address.isEmpty()) agents.append(a);
  }
  settings.endArray();
  return agents;
}

void storeSavedAgents(const QList<SavedAgent>& agents) {
  QSettings settings;
  settings.remove(QStringLiteral("agents"));
  settings.beginWriteArray(QStringLiteral("agents"), static_cast<int>(agents.size()));
  for (int i = 0; i < agents.size(); ++i) {
    settings.setArrayIndex(i);
    settings.setValue(QStringLiteral("address"), agents[i].address);
    settings.setValue(QStringLiteral("label"), agents[i].label);
    settings.setValue(QStringLiteral("token_file"), agents[i].token_file);
    settings.setValue(QStringLiteral("remembered"), agents[i].remembered);
  }
  settings.endArray();
}

QString knownAgentsPath() { return QString::fromStdString(proto::defaultKnownAgentsPath()); }

QString rememberedTokenPath(const QString& address) {
  // "gpu01:7443" -> gpu01_7443.token, "[::1]:7443" -> --1_7443.token
  QString name = address;
  name.remove(QLatin1Char('[')).remove(QLatin1Char(']'));
  const qsizetype colon = name.lastIndexOf(QLatin1Char(':'));
  QString host = colon < 0 ? name : name.left(colon);
  const QString port = colon < 0 ? QString() : name.mid(colon + 1);
  for (QChar& c : host) {
    if (c == QLatin1Char(':')) c = QLatin1Char('-');
    if (!(c.isLetterOrNumber() || c == QLatin1Char('.') || c == QLatin1Char('-'))) c = QLatin1Char('_');
  }
  const QString dir = QFileInfo(knownAgentsPath()).absolutePath() + QStringLiteral("/agents");
  return dir + QLatin1Char('/') + host + QLatin1Char('_') + port + QStringLiteral(".token");
}

core::Status writeTokenFile(const QString& path, const QString& token) {
  const QString dir = QFileInfo(path).absolutePath();
  if (!QDir().mkpath(dir))
    return core::Error{"cannot create " + localPath(dir) + ": check that you may write there", core::ErrorKind::Io};
  ::chmod(localPath(dir).c_str(), 0700);
  QFile f(path);
  // Created 0600 before the token goes in: never readable by others, even for a moment.
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      !f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner))
    return core::Error{"cannot write " + localPath(path) + ": " + f.errorString().toStdString(), core::ErrorKind::Io};
  const QByteArray line = token.trimmed().toUtf8() + '\n';
  if (f.write(line) != line.size())
    return core::Error{"cannot write " + localPath(path) + ": " + f.errorString().toStdString(), core::ErrorKind::Io};
  return core::Ok{};
}

core::Result<std::string> readTokenFile(const QString& path) {
  if (path.isEmpty())
    return core::Error{"no token: edit the agent and give its token file (or type the token and remember it)",
                       core::ErrorKind::Usage};
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return core::Error{"cannot read the token file " + localPath(path) + ": " + f.errorString().toStdString() +
                           "; edit the agent and give a readable token file",
                       core::ErrorKind::InvalidInput, localPath(path)};
  const std::string token = QString::fromUtf8(f.readLine()).trimmed().toStdString();
  if (token.empty())
    return core::Error{"the token file " + localPath(path) + " is empty: its first line must be the agent's token",
                       core::ErrorKind::InvalidInput, localPath(path)};
  return token;
}

core::Result<bool> forgetFingerprint(const QString& address) {
  auto known = proto::KnownAgents::load(proto::defaultKnownAgentsPath());
  if (!known) return known.error();
  if (!known->forget(address.toStdString())) return false;
  if (auto saved = known->save(); !saved) return saved.error();
  return true;
}

RemoteAgents::RemoteAgents(QObject* parent) : QObject(parent) {}

RemoteAgents::~RemoteAgents() {
  for (Agent& a : agents_)
    if (a.client) a.client->disconnect(this);  // no signal reaches a half-destroyed tracker
}

const RemoteAgents::Agent* RemoteAgents::agent(const QString& address) const {
  const auto it = agents_.constFind(address);
  return it == agents_.constEnd() ? nullptr : &*it;
}

QStringList RemoteAgents::connectedAddresses() const { return order_; }

remote::AgentClient* RemoteAgents::client(const QString& address) const {
  const Agent* a = agent(address);
  return a != nullptr && a->state == State::Connected ? a->client.data() : nullptr;
}

QString RemoteAgents::targetText(const QString& address) const {
  const Agent* a = agent(address);
  if (a == nullptr || !a->description) return address;
  return QString::fromStdString(proto::runTargetText(a->saved.displayName().toStdString(), *a->description));
}

void RemoteAgents::setState(const QString& address, State state, const QString& message) {
  Agent& a = agents_[address];
  a.state = state;
  a.message = message;
  if (state != State::Connected) order_.removeAll(address);
  emit stateChanged(address);
}

void RemoteAgents::connectAgent(const SavedAgent& saved) {
  auto address = remote::parseAgentAddress(saved.address.toStdString());
  if (!address) {
    agents_[saved.address].saved = saved;
    setState(saved.address, State::Failed, QString::fromStdString(address.error().message));
    emit connectionFailed(saved.address, QString::fromStdString(address.error().message));
    return;
  }
  Agent& a = agents_[saved.address];
  a.saved = saved;
  if (a.client && (a.state == State::Connected || a.state == State::Connecting || a.state == State::AskingTrust)) {
    if (a.state == State::Connected) emit connected(saved.address);
    return;  // one connection per agent
  }
  auto token = saved.token_file.isEmpty() && session_tokens_.contains(saved.address)
                   ? core::Result<std::string>(session_tokens_.value(saved.address).toStdString())
                   : readTokenFile(saved.token_file);
  if (!token) {
    const QString message = tr("agent %1: %2").arg(saved.address, QString::fromStdString(token.error().message));
    setState(saved.address, State::Failed, message);
    emit connectionFailed(saved.address, message);
    return;
  }
  if (a.client) {
    a.client->disconnect(this);
    a.client->deleteLater();
  }
  auto* client = new remote::AgentClient(this);
  a.client = client;
  a.description.reset();
  a.jobs.clear();
  const QString key = saved.address;
  connect(client, &remote::AgentClient::trustQuestion, this, [this, key](const QString&, const QString& fingerprint) {
    setState(key, State::AskingTrust);
    emit trustQuestion(key, fingerprint);
  });
  connect(client, &remote::AgentClient::ready, this, [this, key] { onReady(key); });
  connect(client, &remote::AgentClient::failed, this, [this, key](const QString& message) { onFailed(key, message); });
  connect(client, &remote::AgentClient::disconnected, this, [this, key] {
    if (agents_[key].state == State::Connected) onFailed(key, tr("agent %1: the connection was closed").arg(key));
  });
  remote::ConnectOptions options;
  options.address = *address;
  options.token = *token;
  options.trust = remote::TrustPolicy::Ask;
  options.client_name = "shardscope desktop";
  setState(key, State::Connecting);
  client->connectToAgent(std::move(options));
}

void RemoteAgents::answerTrust(const QString& address, bool trust) {
  if (remote::AgentClient* c = agents_.value(address).client) {
    if (trust) setState(address, State::Connecting);
    c->answerTrust(trust);
  }
}

void RemoteAgents::disconnectAgent(const QString& address) {
  auto it = agents_.find(address);
  if (it == agents_.end()) return;
  const bool was_connected = it->state == State::Connected;
  if (it->client) {
    it->client->disconnect(this);
    it->client->disconnectFromAgent();
    it->client->deleteLater();
    it->client = nullptr;
  }
  setState(address, State::Disconnected);
  if (was_connected) emit disconnected(address);
}

void RemoteAgents::onReady(const QString& address) {
  remote::AgentClient* c = agents_.value(address).client;
  if (c == nullptr) return;
  c->describe([this, self = QPointer<RemoteAgents>(this), address](core::Result<proto::Description> d) {
    if (!self) return;
    if (!d) {
      onFailed(address, QString::fromStdString(d.error().message));
      return;
    }
    Agent& a = agents_[address];
    a.description = std::move(d).value();
    setState(address, State::Connected);
    order_.append(address);
    emit connected(address);
    refreshJobs(address);
  });
}

void RemoteAgents::onFailed(const QString& address, const QString& message) {
  const bool was_connected = agents_[address].state == State::Connected;
  setState(address, State::Failed, message);
  emit connectionFailed(address, message);
  if (was_connected) emit disconnected(address);
}

void RemoteAgents::refreshJobs(const QString& address) {
  remote::AgentClient* c = client(address);
  if (c == nullptr) return;
  c->list([this, self = QPointer<RemoteAgents>(this), address](core::Result<std::vector<proto::JobInfo>> jobs) {
    if (!self) return;
    if (!jobs) return;  // a lost connection says so through failed()
    agents_[address].jobs = std::move(jobs).value();
    emit jobsListed(address);
  });
}

}  // namespace shardscope::app
