// A hung job shown as hung (issue 40 item 2), the window's part: a banner
// over the timeline with the hang or desync verdict in one line and the
// capture's own warnings ("did not finish"), and on the lanes each waiting
// rank's call that never completed and where a stuck rank never entered it.
// The analysis runs on a worker thread when a capture is shown
// (gui/model/hang_focus.h says what is taken from it).
#pragma once

#include "gui/model/hang_focus.h"
#include "gui/model/hang_progress.h"
#include "gui/widgets/timeline_painter.h"

#include <QPointer>
#include <QThread>
#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QPushButton;

namespace osc::gui {

// What the worker found for one model.
struct HangResult {
    std::shared_ptr<TimelineModel> model;
    std::shared_ptr<const HangFocus> focus;
    std::shared_ptr<const HangProgress> progress;  // the Collective progress panel's grid, made on the worker
    std::string error;                             // why there is no analysis
};

class HangBanner : public QWidget {
    Q_OBJECT
public:
    explicit HangBanner(QWidget* parent = nullptr);
    ~HangBanner() override;
    // The capture just shown (nullptr: none): its warnings at once, its hang
    // analysis on a worker; `analysed` follows, hang or not (or the error).
    // Warnings alone show a banner too.
    void setCapture(std::shared_ptr<TimelineModel> model, const QStringList& warnings);
    // Until the worker is done and its result delivered (screenshots, tests).
    void waitForResult();
    const std::shared_ptr<const HangFocus>& focus() const { return focus_; }
    QString headline() const;
    QString warningsText() const;

signals:
    void analysed(const osc::gui::HangResult& result);
    void goToStuckCall();
    void showProgress();

private:
    void refresh();
    void waitForWorkers();

    QLabel* text_ = nullptr;
    QPushButton* goButton_ = nullptr;
    QPushButton* progressButton_ = nullptr;
    QStringList warnings_;
    std::shared_ptr<const HangFocus> focus_;
    std::vector<QPointer<QThread>> workers_;  // each null once it finished and was deleted
    uint64_t generation_ = 0;
};

// Over the lanes (after paintOverlays): each wait outlined and labelled on
// its kernel and overlap lane, each stuck rank's missing call marked.
void paintHangWaits(QPainter& p, const TimelineView& v, const HangFocus& focus);

}  // namespace osc::gui

Q_DECLARE_METATYPE(osc::gui::HangResult)
