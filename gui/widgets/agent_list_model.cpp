#include "gui/widgets/agent_list_model.h"

#include <stdexcept>

namespace osc::gui {

AgentListModel::AgentListModel(QObject* parent, Discover discover)
    : QAbstractTableModel(parent), discover_(std::move(discover)) {
    if (!discover_) discover_ = [] { return control::discoverAgents(); };
}

int AgentListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(agents_.size());
}

int AgentListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant AgentListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const control::AgentStatus& s = agents_[static_cast<size_t>(index.row())].reply.status;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case Pid:
                return QVariant::fromValue<qlonglong>(s.pid);
            case Rank:
                return s.rank >= 0 ? QVariant(s.rank) : QVariant(QStringLiteral("–"));
            case State:
                return QString::fromStdString(s.state);
            case Output:
                return QString::fromStdString(s.output);
            case Host:
                return QString::fromStdString(s.host);
            case CommandLine:
                return QString::fromStdString(s.commandLine);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == State && s.dropped > 0) {
        return tr("%1 records dropped in the current or last capture").arg(static_cast<qulonglong>(s.dropped));
    }
    return {};
}

QVariant AgentListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Pid:
            return tr("pid");
        case Rank:
            return tr("rank");
        case State:
            return tr("state");
        case Output:
            return tr("output file");
        case Host:
            return tr("host");
        case CommandLine:
            return tr("command line");
    }
    return {};
}

void AgentListModel::refresh() {
    std::vector<control::DiscoveredAgent> fresh = discover_();
    // Same pids in the same order (the common case): update in place.
    bool samePids = fresh.size() == agents_.size();
    for (size_t i = 0; samePids && i < fresh.size(); ++i) samePids = fresh[i].pid == agents_[i].pid;
    if (samePids) {
        agents_ = std::move(fresh);
        if (!agents_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    agents_ = std::move(fresh);
    endResetModel();
}

control::ControlReply AgentListModel::send(int row, const control::ControlRequest& request) {
    control::ControlReply reply;
    if (row < 0 || row >= rowCount()) {
        reply.error = "no agent selected";
        return reply;
    }
    control::DiscoveredAgent& a = agents_[static_cast<size_t>(row)];
    try {
        reply = control::sendRequest(a.socketPath, request);
    } catch (const std::exception& e) {
        reply.ok = false;
        reply.error = e.what();
        return reply;
    }
    // Every reply carries the status, failed ones too: show what is true now.
    if (reply.status.pid != 0) {
        a.reply.status = reply.status;
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
    return reply;
}

control::ControlReply AgentListModel::startCapture(int row, std::optional<double> durationS) {
    control::ControlRequest r;
    r.command = control::ControlCommand::Start;
    r.durationS = durationS;
    return send(row, r);
}

control::ControlReply AgentListModel::stopCapture(int row) {
    control::ControlRequest r;
    r.command = control::ControlCommand::Stop;
    return send(row, r);
}

}  // namespace osc::gui
