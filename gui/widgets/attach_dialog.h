// File > Attach to live agent…: the live agents on this machine (pid, rank,
// state, output file) with Start / Stop capture and Refresh. When a capture
// starts, the dialog offers to open its file and follow it (followRequested).
// The data and the requests live in AgentListModel; this is only the window.
#pragma once

#include "gui/widgets/agent_list_model.h"

#include <QDialog>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableView;

namespace osc::gui {

class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr, AgentListModel::Discover discover = {});

    AgentListModel* model() const { return model_; }
    QTableView* view() const { return view_; }
    // Seconds for the next capture; 0 = until stopped.
    void setDuration(double seconds);
    // The row selected in the list, or -1.
    int selectedRow() const;
    // Asks before following (off in tests, which check followRequested).
    void setAskBeforeFollowing(bool ask) { askBeforeFollowing_ = ask; }
    QString lastMessage() const;

public slots:
    void refresh();
    void startSelected();
    void stopSelected();

signals:
    // The user wants to open `path` (the capture just started) and follow it.
    void followRequested(const QString& path);

private:
    void updateButtons();
    void showReply(const control::ControlReply& reply, const QString& done);

    AgentListModel* model_ = nullptr;
    QTableView* view_ = nullptr;
    QDoubleSpinBox* duration_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* stop_ = nullptr;
    QLabel* message_ = nullptr;
    bool askBeforeFollowing_ = true;
};

}  // namespace osc::gui
