// The data behind the Attach dialog: the live agents on this machine, found
// through the agent control client (control/), as a table model, plus
// start/stop requests to one of them. No window needed, so it is tested with
// QAbstractItemModelTester against real control sockets.
#pragma once

#include "control/control_client.h"

#include <QAbstractTableModel>

#include <functional>
#include <optional>
#include <vector>

namespace osc::gui {

class AgentListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Pid, Rank, State, Output, Host, CommandLine, ColumnCount };
    // Where the agents come from; the default asks every socket in the
    // per-user socket directory (control::discoverAgents).
    using Discover = std::function<std::vector<control::DiscoveredAgent>()>;

    explicit AgentListModel(QObject* parent = nullptr, Discover discover = {});

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Asks the agents again. Rows of agents still alive are updated in
    // place, so a selection in the view survives a refresh.
    void refresh();
    const control::DiscoveredAgent& agentAt(int row) const { return agents_.at(static_cast<size_t>(row)); }

    // Start a capture on the agent in `row` (until stopped, or for
    // `durationS` seconds). Returns the reply; on success the row shows the
    // new state and `reply.status.output` names the file being written.
    // A failure is a reply with ok = false and `error` set (unreachable
    // agents included), never an exception.
    control::ControlReply startCapture(int row, std::optional<double> durationS = std::nullopt);
    control::ControlReply stopCapture(int row);

private:
    control::ControlReply send(int row, const control::ControlRequest& request);

    Discover discover_;
    std::vector<control::DiscoveredAgent> agents_;
};

}  // namespace osc::gui
