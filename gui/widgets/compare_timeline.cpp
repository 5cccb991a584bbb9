#include "gui/widgets/compare_timeline.h"

#include "gui/model/step_navigation.h"
#include "gui/widgets/legend_bar.h"
#include "gui/widgets/overview_strip.h"
#include "gui/widgets/timeline_frame.h"
#include "gui/widgets/timeline_widget.h"

#include <QFileInfo>
#include <QLabel>
#include <QScopedValueRollback>
#include <QVBoxLayout>

namespace osc::gui {
namespace {

std::vector<ViewRange> windows(const std::vector<JobStep>& steps) {
    std::vector<ViewRange> out;
    out.reserve(steps.size());
    for (const JobStep& s : steps) out.push_back(s.window);
    return out;
}

QLabel* headerLabel(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setMargin(3);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long path is cut at the window's edge rather than widening it.
    label->setMinimumWidth(1);
    return label;
}

}  // namespace

CompareTimeline::CompareTimeline(QWidget* parent) : QWidget(parent) {
    header_ = headerLabel(this);
    frame_ = new TimelineFrame(this);
    frame_->overview()->hide();
    frame_->legend()->hide();
    timeline_ = frame_->timeline();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(header_);
    layout->addWidget(frame_, 1);
    connect(timeline_, &TimelineWidget::viewRangeChanged, this, &CompareTimeline::onBMoved);
    hide();
}

void CompareTimeline::setRuns(const TimelineWidget& a, const QString& aPath, const LoadedCapture& b) {
    if (!a.model() || !b.model) {
        clear();
        return;
    }
    // The same B again (A reopened or refreshed) keeps B's scroll and selection.
    if (timeline_->model() != b.model.get()) {
        // B fits its own steps as it opens: that must not move A.
        const QScopedValueRollback guard(syncing_, true);
        timeline_->setModel(b.model, b.analysis);
    }
    // B goes wherever A's view maps to, even past B's own capture: clamped
    // to B's bounds it would slide and lose the alignment.
    timeline_->setLimits(ViewLimits{});
    alignment_ = StepAlignment(windows(a.jobSteps()), windows(timeline_->jobSteps()));
    const size_t stepsA = a.jobSteps().size(), stepsB = timeline_->jobSteps().size();
    QString how = alignment_.pairedSteps() > 0 ? tr("aligned by step: step N of B under step N of A, at A's zoom")
                                               : tr("no steps to align by: both runs on their own clocks, at A's zoom");
    if (stepsA != stepsB && alignment_.pairedSteps() > 0)
        how +=
            tr(" (A has %1 steps, B %2: the first %3 aligned)").arg(stepsA).arg(stepsB).arg(alignment_.pairedSteps());
    header_->setText(tr("<b>B</b> (candidate) %1 · %2").arg(QFileInfo(b.path).fileName().toHtmlEscaped(), how));
    header_->setToolTip(b.path);
    if (headerA_) {
        headerA_->setText(tr("<b>A</b> (base) %1").arg(QFileInfo(aPath).fileName().toHtmlEscaped()));
        headerA_->setToolTip(aPath);
        headerA_->show();
    }
    show();
    followA(a.viewRange());
}

void CompareTimeline::setHostLanesShown(bool on) {
    if (!timeline_->model()) return;
    timeline_->model()->setHostLanesShown(on);
    timeline_->relayout();
}

void CompareTimeline::clear() {
    timeline_->setModel(nullptr);
    alignment_ = {};
    if (headerA_) headerA_->hide();
    hide();
}

QLabel* CompareTimeline::headerOfA(QWidget* parent) {
    headerA_ = headerLabel(parent);
    headerA_->hide();
    return headerA_;
}

void CompareTimeline::followA(ViewRange a) {
    if (!timeline_->model()) return;
    const QScopedValueRollback guard(syncing_, true);
    timeline_->setViewRange(alignment_.viewInB(a), false);
}

void CompareTimeline::onBMoved(ViewRange b) {
    if (syncing_ || !timeline_->model()) return;
    // A then moves and re-aligns B through followA; the guard stops the echo.
    const QScopedValueRollback guard(syncing_, true);
    emit viewMovedInB(alignment_.inverse().viewInB(b));
}

}  // namespace osc::gui
