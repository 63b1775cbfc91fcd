#include "connections_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "agent_client.h"
#include "shardscope/core/protocol/known_agents.h"
#include "shardscope/core/summary.h"

namespace shardscope::app {

namespace proto = core::protocol;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString esc(const std::string& s) { return qs(s).toHtmlEscaped(); }

QString bytesText(std::uint64_t bytes) { return bytes == 0 ? QStringLiteral("\u2014") : qs(core::formatBytes(bytes)); }

QString stateText(RemoteAgents::State state) {
  switch (state) {
    case RemoteAgents::State::Disconnected:
      return QObject::tr("not connected");
    case RemoteAgents::State::Connecting:
      return QObject::tr("connecting\u2026");
    case RemoteAgents::State::AskingTrust:
      return QObject::tr("waiting for you to check its fingerprint");
    case RemoteAgents::State::Connected:
      return QObject::tr("connected");
    case RemoteAgents::State::Failed:
      return QObject::tr("failed");
  }
  return {};
}

// The description as HTML: the agent, its cluster, launcher, modes and limits, then each host and its GPUs.
QString descriptionHtml(const proto::Description& d, const QString& fingerprint) {
  QString h;
  const auto row = [&h](const QString& key, const QString& value) {
    h += QStringLiteral("<tr><td style='padding-right:12px'><b>%1</b></td><td>%2</td></tr>").arg(key, value);
  };
  h += QStringLiteral("<h3 style='margin:0'>%1</h3><table cellspacing='2'>").arg(esc(d.agent));
  row(QObject::tr("Fingerprint"), QStringLiteral("<tt>%1</tt>").arg(fingerprint.toHtmlEscaped()));
  row(QObject::tr("Cluster"), QObject::tr("%1: %2 node(s) \u00d7 %3 GPU(s) = <b>%4 GPUs</b> (%5)")
                                  .arg(esc(d.cluster.name.empty() ? std::string("unnamed") : d.cluster.name))
                                  .arg(d.cluster.nodes)
                                  .arg(d.cluster.gpus_per_node)
                                  .arg(d.cluster.worldSize())
                                  .arg(esc(d.cluster.gpu.name)));
  row(QObject::tr("Launcher"), esc(d.launcher));
  QStringList modes;
  for (const auto& m : d.modes) modes << qs(m);
  row(QObject::tr("Modes"), modes.join(QStringLiteral(", ")).toHtmlEscaped());
  row(QObject::tr("Engine"),
      QObject::tr("%1, %2").arg(esc(d.engine_version), d.gpu_engine ? QObject::tr("GPU engine (CUDA, NCCL, CUPTI)")
                                                                    : QObject::tr("CPU only")));
  if (!d.cuda_version.empty() || !d.nccl_version.empty())
    row(QObject::tr("CUDA / NCCL"), QStringLiteral("%1 / %2").arg(esc(d.cuda_version), esc(d.nccl_version)));
  row(QObject::tr("Limits"),
      QObject::tr("%1 ranks, %2 steps, %3 jobs at once").arg(d.max_ranks).arg(d.max_steps).arg(d.max_jobs));
  h += QStringLiteral("</table><h4 style='margin-bottom:2px'>%1</h4><table cellspacing='0' cellpadding='3' border='0'>")
           .arg(QObject::tr("Hosts"));
  h += QObject::tr(
      "<tr><th align='left'>Host</th><th align='right'>CPUs</th><th align='right'>Memory</th>"
      "<th align='left' style='padding-left:12px'>GPUs</th></tr>");
  for (const proto::HostInfo& host : d.hosts) {
    QStringList gpus;
    for (const proto::GpuInfo& g : host.gpus)
      gpus << QStringLiteral("%1: %2 (%3)").arg(g.index).arg(esc(g.name), bytesText(g.memory_bytes));
    h += QStringLiteral(
             "<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3</td>"
             "<td style='padding-left:12px'>%4</td></tr>")
             .arg(esc(host.name))
             .arg(host.cpus)
             .arg(bytesText(host.memory_bytes),
                  gpus.isEmpty() ? QObject::tr("none") : gpus.join(QStringLiteral("<br>")));
  }
  h += QStringLiteral("</table>");
  return h;
}

// Add / Edit: address, label, and the token as a file or typed (remembered in a 0600 file, or for this session).
class AgentEditor : public QDialog {
 public:
  AgentEditor(const SavedAgent& agent, QWidget* parent) : QDialog(parent) {
    setWindowTitle(agent.address.isEmpty() ? tr("Add Agent") : tr("Edit Agent"));
    address_->setText(agent.address);
    address_->setPlaceholderText(tr("gpu01.example.org:7443"));
    label_->setText(agent.label);
    label_->setPlaceholderText(tr("optional, e.g. \u201ctraining cluster\u201d"));
    file_->setText(agent.remembered ? QString() : agent.token_file);
    file_->setPlaceholderText(tr("a file whose first line is the agent's token"));
    token_->setEchoMode(QLineEdit::Password);
    token_->setPlaceholderText(agent.remembered ? tr("remembered (type to replace)") : tr("or type the token"));
    remember_->setChecked(true);
    remember_->setToolTip(
        tr("Kept in %1 (mode 0600), never in the settings file")
            .arg(rememberedTokenPath(agent.address.isEmpty() ? QStringLiteral("host:port") : agent.address)));
    auto* browse = new QPushButton(tr("Browse\u2026"));
    connect(browse, &QPushButton::clicked, this, [this] {
      const QString f = QFileDialog::getOpenFileName(this, tr("Token File"));
      if (!f.isEmpty()) file_->setText(f);
    });
    auto* file_row = new QHBoxLayout;
    file_row->addWidget(file_, 1);
    file_row->addWidget(browse);
    auto* form = new QFormLayout;
    form->addRow(tr("Address (host:port)"), address_);
    form->addRow(tr("Label"), label_);
    form->addRow(tr("Token file"), file_row);
    form->addRow(tr("Token"), token_);
    form->addRow(QString(), remember_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    resize(560, sizeHint().height());
    keep_ = agent;
  }
  [[nodiscard]] SavedAgent agent() const {
    SavedAgent a = keep_;
    a.address = address_->text().trimmed();
    a.label = label_->text().trimmed();
    if (!file_->text().trimmed().isEmpty()) {
      a.token_file = file_->text().trimmed();
      a.remembered = false;
    }
    return a;
  }
  [[nodiscard]] QString token() const { return token_->text().trimmed(); }
  [[nodiscard]] bool remember() const { return remember_->isChecked(); }

 private:
  QLineEdit* address_ = new QLineEdit;
  QLineEdit* label_ = new QLineEdit;
  QLineEdit* file_ = new QLineEdit;
  QLineEdit* token_ = new QLineEdit;
  QCheckBox* remember_ = new QCheckBox(tr("Remember the token (a file only you can read)"));
  SavedAgent keep_;
};

}  // namespace

ConnectionsDialog::ConnectionsDialog(RemoteAgents* agents, QWidget* parent)
    : QDialog(parent),
      agents_(agents),
      list_(new QListWidget),
      state_(new QLabel),
      description_(new QTextBrowser),
      jobs_title_(new QLabel(tr("<b>Jobs on the agent</b>"))),
      jobs_(new QTableWidget),
      add_(new QPushButton(tr("Add\u2026"))),
      edit_(new QPushButton(tr("Edit\u2026"))),
      remove_(new QPushButton(tr("Remove"))),
      connect_(new QPushButton(tr("Connect"))),
      disconnect_(new QPushButton(tr("Disconnect"))),
      forget_(new QPushButton(tr("Forget Fingerprint\u2026"))),
      refresh_jobs_(new QPushButton(tr("Refresh Jobs"))) {
  setObjectName(QStringLiteral("ConnectionsDialog"));
  setWindowTitle(tr("Connections"));
  list_->setObjectName(QStringLiteral("agentList"));
  state_->setObjectName(QStringLiteral("agentState"));
  state_->setWordWrap(true);
  state_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  description_->setObjectName(QStringLiteral("agentDescription"));
  description_->setOpenLinks(false);
  jobs_->setObjectName(QStringLiteral("agentJobs"));
  jobs_->setColumnCount(7);
  jobs_->setHorizontalHeaderLabels(
      {tr("Job"), tr("Label"), tr("State"), tr("Mode"), tr("Ranks"), tr("Progress"), tr("Created")});
  jobs_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  jobs_->setSelectionBehavior(QAbstractItemView::SelectRows);
  jobs_->verticalHeader()->hide();
  jobs_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  jobs_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  forget_->setToolTip(
      tr("Remove the agent's pinned fingerprint from %1: the next connection asks again").arg(knownAgentsPath()));

  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(new QLabel(tr("<b>Agents</b>")));
  left_layout->addWidget(list_, 1);
  auto* grid = new QGridLayout;
  grid->addWidget(add_, 0, 0);
  grid->addWidget(edit_, 0, 1);
  grid->addWidget(remove_, 0, 2);
  grid->addWidget(connect_, 1, 0);
  grid->addWidget(disconnect_, 1, 1);
  grid->addWidget(forget_, 1, 2);
  left_layout->addLayout(grid);
  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(state_);
  right_layout->addWidget(description_, 3);
  auto* jobs_row = new QHBoxLayout;
  jobs_row->addWidget(jobs_title_, 1);
  jobs_row->addWidget(refresh_jobs_);
  right_layout->addLayout(jobs_row);
  right_layout->addWidget(jobs_, 2);
  auto* split = new QSplitter;
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  split->setSizes({330, 700});
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addWidget(close);
  resize(1100, 720);

  connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(add_, &QPushButton::clicked, this, &ConnectionsDialog::onAdd);
  connect(edit_, &QPushButton::clicked, this, &ConnectionsDialog::onEdit);
  connect(remove_, &QPushButton::clicked, this, &ConnectionsDialog::onRemove);
  connect(connect_, &QPushButton::clicked, this, &ConnectionsDialog::connectSelected);
  connect(disconnect_, &QPushButton::clicked, this, &ConnectionsDialog::disconnectSelected);
  connect(forget_, &QPushButton::clicked, this, &ConnectionsDialog::onForget);
  connect(refresh_jobs_, &QPushButton::clicked, this, [this] { agents_->refreshJobs(selectedAddress()); });
  connect(list_, &QListWidget::currentRowChanged, this, &ConnectionsDialog::showAgent);
  connect(list_, &QListWidget::itemDoubleClicked, this, &ConnectionsDialog::connectSelected);
  connect(agents_, &RemoteAgents::stateChanged, this, [this](const QString&) { reload(); });
  connect(agents_, &RemoteAgents::jobsListed, this, [this](const QString& address) {
    if (address == selectedAddress()) showJobs(address);
  });
  connect(agents_, &RemoteAgents::trustQuestion, this, &ConnectionsDialog::askTrust);
  connect(agents_, &RemoteAgents::connectionFailed, this, &ConnectionsDialog::showFailure);
  reload();
  if (list_->count() > 0) list_->setCurrentRow(0);
}

void ConnectionsDialog::reload() {
  const QString selected = selectedAddress();
  saved_ = loadSavedAgents();
  const QSignalBlocker block(list_);
  list_->clear();
  for (const SavedAgent& a : saved_) {
    const RemoteAgents::Agent* state = agents_->agent(a.address);
    const QString text =
        QStringLiteral("%1\n%2 \u2014 %3")
            .arg(a.displayName(), a.address, stateText(state ? state->state : RemoteAgents::State::Disconnected));
    auto* item = new QListWidgetItem(text, list_);
    item->setData(Qt::UserRole, a.address);
    if (a.address == selected) list_->setCurrentItem(item);
  }
  if (list_->currentRow() < 0 && list_->count() > 0) list_->setCurrentRow(0);
  showAgent();
}

QString ConnectionsDialog::selectedAddress() const {
  const QListWidgetItem* item = list_->currentItem();
  return item != nullptr ? item->data(Qt::UserRole).toString() : QString();
}

void ConnectionsDialog::selectAgent(const QString& address) {
  for (int i = 0; i < list_->count(); ++i)
    if (list_->item(i)->data(Qt::UserRole).toString() == address) list_->setCurrentRow(i);
}

void ConnectionsDialog::showAgent() {
  const QString address = selectedAddress();
  const RemoteAgents::Agent* a = agents_->agent(address);
  if (address.isEmpty()) {
    state_->setText(
        tr("No agents yet: Add one with the address and token its administrator gave you "
           "(docs/desktop/remote.md)."));
    description_->clear();
  } else if (a == nullptr || a->state == RemoteAgents::State::Disconnected) {
    state_->setText(tr("<b>%1</b>: not connected. Connect to see its cluster and jobs.").arg(address.toHtmlEscaped()));
    description_->clear();
  } else if (a->state == RemoteAgents::State::Failed) {
    state_->setText(tr("<b>%1</b>: <span style='color:#c02020'>%2</span>")
                        .arg(address.toHtmlEscaped(),
                             a->message.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))));
    description_->clear();
  } else {
    state_->setText(tr("<b>%1</b>: %2").arg(address.toHtmlEscaped(), stateText(a->state)));
    const remote::AgentClient* client = a->client.data();
    if (a->description && client != nullptr)
      description_->setHtml(descriptionHtml(*a->description, qs(client->fingerprint())));
    else
      description_->clear();
  }
  showJobs(address);
  updateButtons();
}

void ConnectionsDialog::showJobs(const QString& address) {
  const RemoteAgents::Agent* a = agents_->agent(address);
  const bool connected = a != nullptr && a->state == RemoteAgents::State::Connected;
  jobs_->setRowCount(0);
  if (!connected) return;
  jobs_->setRowCount(static_cast<int>(a->jobs.size()));
  int row = 0;
  for (auto it = a->jobs.rbegin(); it != a->jobs.rend(); ++it, ++row) {  // newest first
    const proto::JobInfo& j = *it;
    // A job that ended says which run it left; one that runs, how far it is.
    const QString progress = proto::finished(j.state)
                                 ? (j.run > 0 ? QStringLiteral("run %1").arg(j.run) : QStringLiteral("—"))
                             : j.progress.total > 0 ? QStringLiteral("%1/%2").arg(j.progress.done).arg(j.progress.total)
                                                    : qs(j.progress.stage);
    const QStringList cells = {qs(j.job),
                               qs(j.label),
                               qs(std::string(proto::toString(j.state))),
                               qs(j.mode),
                               QString::number(j.world_size),
                               progress,
                               qs(j.created).replace(QLatin1Char('T'), QLatin1Char(' '))};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (j.state == proto::JobState::Failed && !j.error.empty()) item->setToolTip(qs(j.error));
      jobs_->setItem(row, c, item);
    }
  }
  jobs_title_->setText(tr("<b>Jobs on the agent</b> (%1)").arg(a->jobs.size()));
}

void ConnectionsDialog::updateButtons() {
  const QString address = selectedAddress();
  const RemoteAgents::Agent* a = agents_->agent(address);
  const auto state = a != nullptr ? a->state : RemoteAgents::State::Disconnected;
  const bool busy = state == RemoteAgents::State::Connecting || state == RemoteAgents::State::AskingTrust;
  edit_->setEnabled(!address.isEmpty());
  remove_->setEnabled(!address.isEmpty());
  forget_->setEnabled(!address.isEmpty());
  connect_->setEnabled(!address.isEmpty() && !busy && state != RemoteAgents::State::Connected);
  disconnect_->setEnabled(state == RemoteAgents::State::Connected || busy);
  refresh_jobs_->setEnabled(state == RemoteAgents::State::Connected);
}

core::Status ConnectionsDialog::saveAgent(SavedAgent agent, const QString& token, bool remember) {
  auto parsed = remote::parseAgentAddress(agent.address.trimmed().toStdString());
  if (!parsed) return parsed.error();
  std::transform(parsed->host.begin(), parsed->host.end(), parsed->host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  agent.address = qs(parsed->text());
  if (!token.isEmpty()) {
    if (remember) {
      agent.token_file = rememberedTokenPath(agent.address);
      agent.remembered = true;
      if (auto written = writeTokenFile(agent.token_file, token); !written) return written;
    } else {
      agents_->setSessionToken(agent.address, token);
      agent.token_file.clear();
      agent.remembered = false;
    }
  } else if (agent.token_file.isEmpty()) {
    return core::Error{"no token: give the file that holds the agent's token, or type the token",
                       core::ErrorKind::Usage};
  }
  QList<SavedAgent> all = loadSavedAgents();
  bool replaced = false;
  for (SavedAgent& a : all)
    if (a.address == agent.address) {
      a = agent;
      replaced = true;
    }
  if (!replaced) all.append(agent);
  storeSavedAgents(all);
  reload();
  selectAgent(agent.address);
  return core::Ok{};
}

void ConnectionsDialog::removeAgent(const QString& address) {
  QList<SavedAgent> all = loadSavedAgents();
  for (const SavedAgent& a : all)
    if (a.address == address && a.remembered) QFile::remove(a.token_file);
  all.erase(std::remove_if(all.begin(), all.end(), [&](const SavedAgent& a) { return a.address == address; }),
            all.end());
  storeSavedAgents(all);
  agents_->disconnectAgent(address);
  reload();
}

void ConnectionsDialog::connectSelected() {
  const QString address = selectedAddress();
  for (const SavedAgent& a : saved_)
    if (a.address == address) agents_->connectAgent(a);
}

void ConnectionsDialog::disconnectSelected() { agents_->disconnectAgent(selectedAddress()); }

core::Result<bool> ConnectionsDialog::forgetSelectedFingerprint() {
  const QString address = selectedAddress();
  if (address.isEmpty()) return false;
  agents_->disconnectAgent(address);
  return forgetFingerprint(address);
}

void ConnectionsDialog::onAdd() {
  AgentEditor editor(SavedAgent{}, this);
  while (editor.exec() == QDialog::Accepted) {
    const core::Status saved = saveAgent(editor.agent(), editor.token(), editor.remember());
    if (saved) return;
    QMessageBox::warning(this, tr("Add Agent"), qs(saved.error().message));
  }
}

void ConnectionsDialog::onEdit() {
  const QString address = selectedAddress();
  for (const SavedAgent& a : saved_) {
    if (a.address != address) continue;
    AgentEditor editor(a, this);
    while (editor.exec() == QDialog::Accepted) {
      const SavedAgent edited = editor.agent();
      const core::Status saved = saveAgent(edited, editor.token(), editor.remember());
      if (saved) {
        if (edited.address != address) removeAgent(address);
        return;
      }
      QMessageBox::warning(this, tr("Edit Agent"), qs(saved.error().message));
    }
  }
}

void ConnectionsDialog::onRemove() {
  const QString address = selectedAddress();
  if (address.isEmpty()) return;
  if (QMessageBox::question(this, tr("Remove Agent"),
                            tr("Remove %1 from the list (and its remembered token)? Its pinned fingerprint stays "
                               "in %2 until you forget it.")
                                .arg(address, knownAgentsPath())) == QMessageBox::Yes)
    removeAgent(address);
}

void ConnectionsDialog::onForget() {
  const QString address = selectedAddress();
  if (address.isEmpty()) return;
  if (QMessageBox::question(this, tr("Forget Fingerprint"),
                            tr("Forget the fingerprint pinned for %1 in %2? The next connection shows the agent's "
                               "fingerprint and asks again: compare it with the one the agent printed.")
                                .arg(address, knownAgentsPath())) != QMessageBox::Yes)
    return;
  const auto forgotten = forgetSelectedFingerprint();
  if (!forgotten)
    QMessageBox::warning(this, tr("Forget Fingerprint"), qs(forgotten.error().message));
  else
    state_->setText(*forgotten ? tr("The fingerprint of %1 is forgotten.").arg(address)
                               : tr("No fingerprint was pinned for %1.").arg(address));
}

void ConnectionsDialog::askTrust(const QString& address, const QString& fingerprint) {
  emit trustAsked(address, fingerprint);
  if (trust_answer_ != TrustAnswer::Ask) {
    agents_->answerTrust(address, trust_answer_ == TrustAnswer::Trust);
    return;
  }
  if (box_) box_->close();
  auto* box = new QMessageBox(QMessageBox::Question, tr("Trust this agent?"),
                              tr("<p>This is the first connection to <b>%1</b>. It presents this certificate "
                                 "fingerprint (SHA-256):</p><p style='font-size:large'><tt>%2</tt></p>")
                                  .arg(address.toHtmlEscaped(), fingerprint.toHtmlEscaped()),
                              QMessageBox::NoButton, this);
  box->setInformativeText(
      tr("Compare it with the fingerprint the agent printed when it started (\u201ccertificate fingerprint "
         "sha256:\u2026\u201d) or the one its administrator gave you. Trust it only if they are the same: it is then "
         "pinned in %1, and a different one later is refused.")
          .arg(knownAgentsPath()));
  box->addButton(tr("Trust and Connect"), QMessageBox::AcceptRole);
  box->addButton(QMessageBox::Cancel);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box_ = box;
  connect(box, &QMessageBox::finished, this, [this, box, address](int) {
    const bool trust = box->buttonRole(box->clickedButton()) == QMessageBox::AcceptRole;
    agents_->answerTrust(address, trust);
  });
  box->open();
}

QString ConnectionsDialog::changedFingerprintHtml(const QString& address) const {
  const RemoteAgents::Agent* a = agents_->agent(address);
  const remote::AgentClient* client = a != nullptr ? a->client.data() : nullptr;
  const std::string presented = client != nullptr ? client->fingerprint() : std::string();
  auto known = proto::KnownAgents::load(knownAgentsPath().toStdString());
  const auto check = known ? known->check(address.toStdString(), presented) : proto::KnownAgents::Check{};
  return tr("<table cellspacing='4'><tr><td><b>Pinned</b></td><td><tt>%1</tt></td></tr>"
            "<tr><td></td><td>in %2, line %3</td></tr>"
            "<tr><td><b>Presented now</b></td><td><tt>%4</tt></td></tr></table>"
            "<p>If the change is expected (the agent was given a new certificate), ask its administrator for the "
            "fingerprint it printed at start. Then use <b>Forget Fingerprint\u2026</b> here (or delete line %3 of "
            "%2) and connect again: the new fingerprint is shown for you to compare before it is pinned.</p>"
            "<p>If the change is not expected, do not connect: tell the agent's administrator.</p>")
      .arg(QString::fromStdString(check.pinned).toHtmlEscaped(), knownAgentsPath().toHtmlEscaped())
      .arg(check.line)
      .arg(QString::fromStdString(presented).toHtmlEscaped());
}

void ConnectionsDialog::showFailure(const QString& address, const QString& message) {
  selectAgent(address);
  showAgent();
  if (box_) box_->close();
  const bool changed = message.contains(QStringLiteral("CHANGED"));
  auto* box = new QMessageBox(changed ? QMessageBox::Critical : QMessageBox::Warning,
                              changed ? tr("Agent identity CHANGED") : tr("Could not connect"), QString(),
                              QMessageBox::Ok, this);
  if (changed) {
    box->setText(tr("<p style='font-size:x-large; color:#c02020'><b>WARNING: the identity of %1 has "
                    "CHANGED.</b></p><p><b>The connection was refused.</b> Someone may be between you and the "
                    "agent, or the agent has a new certificate.</p>")
                     .arg(address.toHtmlEscaped()));
    box->setInformativeText(changedFingerprintHtml(address));
    box->setDetailedText(message);
    box->setStyleSheet(
        QStringLiteral("QLabel#qt_msgbox_label, QLabel#qt_msgbox_informativelabel { min-width: 680px; }"));
  } else {
    box->setText(tr("<b>Could not connect to %1.</b>").arg(address.toHtmlEscaped()));
    box->setInformativeText(message +
                            tr("\n\nCheck the address, that the agent runs and that its token is the one given "
                               "here (Edit\u2026), then Connect again."));
  }
  box->setAttribute(Qt::WA_DeleteOnClose);
  box_ = box;
  box->open();
}

}  // namespace shardscope::app
