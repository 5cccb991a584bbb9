// The Collective progress panel: per communicator, each rank's progress
// through the collectives' sequence numbers (gui/model/hang_progress.h), the
// call the others wait in outlined and the ranks that never entered it
// marked, under the paragraph `overlapscope hang` prints. Computed from the
// loaded capture when the panel is first shown.
#pragma once

#include "gui/model/hang_progress.h"
#include "gui/model/timeline_model.h"

#include <QWidget>

#include <memory>
#include <optional>

class QMainWindow;
class QMenu;
class QScrollArea;

namespace osc::gui {

class HangProgressView : public QWidget {
    Q_OBJECT
public:
    explicit HangProgressView(QWidget* parent = nullptr);
    void setProgress(std::optional<HangProgress> progress, QString message);
    const std::optional<HangProgress>& progress() const { return progress_; }
    QString message() const { return message_; }
    QSize sizeHint() const override;
    // Where a cell is painted at the current width (tests, tooltips); empty when there is none.
    QRect cellRect(size_t block, size_t row, size_t column) const;

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    bool event(QEvent* e) override;  // tooltips: a cell's call and state

private:
    int layoutHeight(int width) const;

    std::optional<HangProgress> progress_;
    QString message_;
};

class HangPanel : public QWidget {
    Q_OBJECT
public:
    explicit HangPanel(QWidget* parent = nullptr);
    // The loaded capture; analysed when the panel is next shown.
    void setData(std::shared_ptr<TimelineModel> model, bool hasAnalysisOnly);
    void compute();
    // An analysis of the loaded capture made elsewhere (the window's hang banner): shown as computed here.
    void setAnalysis(const hang::HangAnalysis& analysis);
    HangProgressView* view() const { return view_; }
    QSize sizeHint() const override { return {640, 320}; }

protected:
    void showEvent(QShowEvent*) override;

private:
    std::shared_ptr<TimelineModel> model_;
    bool stale_ = false;
    QScrollArea* scroll_ = nullptr;
    HangProgressView* view_ = nullptr;
};

// A hidden "Collective progress" dock (object name "hang": `--panel hang`)
// and a View menu entry that shows it.
HangPanel* addHangDock(QMainWindow* window, QMenu* viewMenu);

}  // namespace osc::gui
