// What the window shows in place of the timeline when the file it opened
// holds results but no trace (a saved report, partial results): a line that
// says what was opened and why there is no timeline, the captures it was
// made from, the job's summary in the report's words, the per-device table
// and the findings of the selected device. The Steps, Collectives panels
// show the rest, as for a capture.
#pragma once

#include "gui/widgets/capture_loader.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTableView;

namespace osc::gui {

class DeviceTableModel;

class AnalysisOnlyView : public QWidget {
    Q_OBJECT
public:
    explicit AnalysisOnlyView(QWidget* parent = nullptr);
    // `loaded` has an analysis and no timeline model.
    void setLoaded(const LoadedCapture& loaded);

    QString notice() const;        // "Saved report (...): ...; open the captures for a timeline"
    QString madeFrom() const;      // "made from 2 captures in DIR: a.sqlite, b.sqlite", or ""
    QString summary() const;       // the report's summary headline
    QString findingsText() const;  // of the selected device
    DeviceTableModel* deviceModel() const { return devices_; }
    QTableView* deviceView() const { return view_; }

private:
    void showFindingsOf(int viewRow);

    std::shared_ptr<const Analysis> analysis_;
    QLabel* notice_ = nullptr;
    QLabel* madeFrom_ = nullptr;
    QLabel* summary_ = nullptr;
    QTableView* view_ = nullptr;
    DeviceTableModel* devices_ = nullptr;
    QPlainTextEdit* findings_ = nullptr;
};

// The line in place of the timeline: what `loaded` is and why it has none.
QString noTimelineNotice(const LoadedCapture& loaded);

}  // namespace osc::gui
