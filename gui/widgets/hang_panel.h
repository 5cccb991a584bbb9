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
    int widestLabel_ = 0;
};

class HangPanel : public QWidget {
    Q_OBJECT
public:
    explicit HangPanel(QWidget* parent = nullptr);
    // The loaded capture; analysed when the panel is next shown, unless
    // analysedElsewhere() was called.
    void setData(std::shared_ptr<TimelineModel> model, bool hasAnalysisOnly);
    void compute();
    // The window's hang banner analyses every capture on a worker and hands
    // its results to setProgress()/setFailure(): the panel then never runs the
    // analysis on the GUI thread (0.6 s at 1,024 ranks), and a refresh of the
    // same job keeps the grid shown until the new result lands.
    void analysedElsewhere() { elsewhere_ = true; }
    // An analysis of the loaded capture made elsewhere: shown as computed here.
    void setAnalysis(const hang::HangAnalysis& analysis);
    void setProgress(HangProgress progress);
    void setFailure(const QString& why);
    HangProgressView* view() const { return view_; }
    QSize sizeHint() const override { return {640, 320}; }

protected:
    void showEvent(QShowEvent*) override;

private:
    std::shared_ptr<TimelineModel> model_;
    bool stale_ = false;
    bool elsewhere_ = false;
    QScrollArea* scroll_ = nullptr;
    HangProgressView* view_ = nullptr;
};

// A hidden "Collective progress" dock (object name "hang": `--panel hang`)
// and a View menu entry that shows it.
HangPanel* addHangDock(QMainWindow* window, QMenu* viewMenu);

}  // namespace osc::gui
