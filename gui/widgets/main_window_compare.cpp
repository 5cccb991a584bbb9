// MainWindow: comparing two runs (issue 30 item 1). Run A is the open file
// with its timeline; run B's timeline sits under it in a splitter, aligned
// by step (compare_timeline.h). While comparing, the Steps and Collectives
// panels show the compare tables (compare_tables.h) in place of A's own,
// under a header naming both runs and the job's change; a row click moves
// A's timeline there, as in A's own tables, and B's follows.
#include "gui/widgets/compare_tables.h"
#include "gui/widgets/compare_timeline.h"
#include "gui/widgets/hang_view.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/main_window_parts.h"
#include "gui/widgets/table_export.h"
#include "gui/widgets/timeline_frame.h"
#include "gui/widgets/timeline_widget.h"

#include <QAction>
#include <QDockWidget>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace osc::gui {

using namespace window_parts;

namespace {

constexpr int kComparePage = 2;  // after the table (0) and the hint (1), see withHint

// Keeps A's and B's lanes equally tall in their splitter while the window
// is laid out and resized: A's part also holds the overview strip and the
// legend, so halving the page cut A's lanes (its overlap lane) short. Once
// the user moves the splitter, the sizes are theirs.
class SplitBalancer : public QObject {
public:
    SplitBalancer(QSplitter* split, QWidget* a, QWidget* b) : QObject(split), split_(split), a_(a), b_(b) {
        // Two timelines share the height a window gives one: each may be
        // shorter than alone, or a part shorter than its minimum is cut off
        // (A's overlap lane, under the strip and legend, first).
        for (QWidget* t : {a, b}) t->setMinimumHeight(kMinLanesHeight);
        a->installEventFilter(this);
        b->installEventFilter(this);
        connect(split, &QSplitter::splitterMoved, this, [this] { userSized_ = true; });
    }
    bool eventFilter(QObject* watched, QEvent* e) override {
        if (e->type() != QEvent::Resize || balancing_ || userSized_ || !b_->isVisible()) return false;
        // What each part holds besides its lanes, measured as its timeline is
        // laid out (the other part may not be yet).
        const QList<int> sizes = split_->sizes();
        if (sizes.size() != 2) return false;
        if (watched == a_) chromeA_ = sizes[0] - a_->height();
        if (watched == b_) chromeB_ = sizes[1] - b_->height();
        if (chromeA_ < 0 || chromeB_ < 0) return false;
        const int lanes = (sizes[0] + sizes[1] - chromeA_ - chromeB_) / 2;
        if (lanes <= 0 || std::abs(sizes[0] - chromeA_ - lanes) < 2) return false;
        balancing_ = true;
        split_->setSizes({lanes + chromeA_, lanes + chromeB_});
        balancing_ = false;
        return false;
    }

private:
    static constexpr int kMinLanesHeight = 100;  // the ruler and a group's title and first lanes
    QSplitter* split_;
    QWidget *a_, *b_;
    int chromeA_ = -1, chromeB_ = -1;
    bool userSized_ = false, balancing_ = false;
};
constexpr size_t kMaxNotes = 3;  // more are counted, not listed: the tables stay in view

// A compare table under its header line, as a page of a panel's stack.
QLabel* addComparePage(QStackedWidget* stack, QTableView* table) {
    auto* page = new QWidget(stack);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* header = new QLabel(page);
    header->setWordWrap(true);
    header->setMargin(4);
    header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(header);
    layout->addWidget(table, 1);
    stack->addWidget(page);
    return header;
}

}  // namespace

void MainWindow::buildCompareMenu(QMenu* file) {
    file->addAction(tr("&Compare with…"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Compare with run B (the open file is run A)"), {},
                                         tr("Captures and results (*.sqlite *.db *.json *.json.gz);;All files (*)"));
        if (!path.isEmpty()) compareWith(path);
    });
    file->addAction(tr("Compare with d&irectory…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Compare with run B: a multi-rank directory"));
        if (!dir.isEmpty()) compareWith(dir);
    });
    stopCompareAction_ = file->addAction(tr("Stop comparing"), this, &MainWindow::stopComparing);
    stopCompareAction_->setEnabled(false);
}

void MainWindow::buildCompareViews() {
    // A's frame and B's timeline share the timeline's page of the centre.
    auto* split = new QSplitter(Qt::Vertical, centre_);
    split->setChildrenCollapsible(false);
    const int page = centre_->indexOf(frame_);
    centre_->removeWidget(frame_);
    compareTimeline_ = new CompareTimeline(split);
    auto* pageA = new QWidget(split);
    auto* layoutA = new QVBoxLayout(pageA);
    layoutA->setContentsMargins(0, 0, 0, 0);
    layoutA->setSpacing(0);
    hangBanner_ = new HangBanner(pageA);  // a hang or the capture's warnings, over A's timeline
    layoutA->addWidget(hangBanner_);
    layoutA->addWidget(compareTimeline_->headerOfA(pageA));
    layoutA->addWidget(frame_, 1);
    frame_->show();  // the stack hid it as it let go
    split->addWidget(pageA);
    split->addWidget(compareTimeline_);
    centre_->insertWidget(page, split);
    centre_->setCurrentWidget(split);
    timelinePage_ = split;
    new SplitBalancer(split, timeline_, compareTimeline_->timeline());
    connect(timeline_, &TimelineWidget::viewRangeChanged, compareTimeline_, &CompareTimeline::followA);
    connect(compareTimeline_, &CompareTimeline::viewMovedInB, this,
            [this](ViewRange a) { timeline_->setViewRange(a); });

    stepCompare_ = new StepCompareModel(this);
    collCompare_ = new CollectiveCompareModel(this);
    QTableView* stepTable = makeTable(stepCompare_, StepCompareModel::Device, this);
    QTableView* collTable = makeTable(collCompare_, CollectiveCompareModel::Device, this);
    stepCompareLabel_ = addComparePage(stepStack_, stepTable);
    collCompareLabel_ = addComparePage(collStack_, collTable);
    for (QTableView* table : {stepTable, collTable}) {
        connect(table, &QTableView::clicked, this, &MainWindow::jumpToRow);
        installTableCopy(table);
    }
    compareLoader_ = new CaptureLoader(this);
    // A load finished just as it was stopped or replaced stays unshown (its
    // signal may already be queued when cancel() comes).
    connect(compareLoader_, &CaptureLoader::loaded, this, [this](const LoadedCapture& loaded) {
        if (loaded.path == compareWanted_) showComparison(loaded);
    });
    connect(compareLoader_, &CaptureLoader::failed, this, [this](const QString& msg) {
        if (compareWanted_.isEmpty()) return;
        compareWanted_.clear();
        statusBar()->showMessage(tr("Cannot compare: %1").arg(msg), 10000);
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot compare"), msg, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();  // not exec(): a modal loop would stall the window (and tests)
    });
}

void MainWindow::compareWith(const QString& given) {
    const QString path = QFileInfo(given).absoluteFilePath();
    compareWanted_ = path;
    statusBar()->showMessage(tr("Loading run B: %1…").arg(path));
    compareLoader_->start(path, settings_);  // the same analysis settings as A, or the numbers would not compare
}

void MainWindow::showComparison(const LoadedCapture& candidate) {
    compareWanted_.clear();
    candidate_ = candidate;
    statusBar()->clearMessage();
    const bool timelineB = !compareTimeline_->isHidden();
    refreshComparison();
    stepDock_->show();
    stepDock_->raise();
    // Two timelines now share what A's lanes had: the panels give back what they took of A's blank.
    if (!timelineB && !compareTimeline_->isHidden())
        resizeDocks({stepDock_}, {static_cast<int>(height() * kBottomShareMin)}, Qt::Vertical);
}

void MainWindow::stopComparing() {
    compareLoader_->cancel();  // a run B still loading would start comparing again
    compareWanted_.clear();
    candidate_ = {};
    refreshComparison();
}

void MainWindow::refreshComparison() {
    stopCompareAction_->setEnabled(comparing());
    comparison_.reset();
    const bool timelineB = !compareTimeline_->isHidden();
    if (comparing() && candidate_.model) candidate_.model->setHostLanesShown(hostAction_->isChecked());
    compareTimeline_->setRuns(*timeline_, current_.path, comparing() ? candidate_ : LoadedCapture{});
    // A and B halve the page when B's timeline first appears; SplitBalancer
    // then evens out their lanes.
    if (!timelineB && !compareTimeline_->isHidden())
        if (auto* split = qobject_cast<QSplitter*>(timelinePage_)) split->setSizes({1, 1});
    if (!comparing() || !current_.analysis) {
        stepCompare_->setData({});
        collCompare_->setData({});
        if (!current_.path.isEmpty()) setWindowTitle(tr("overlapscope · %1").arg(QFileInfo(current_.path).fileName()));
        stepDock_->setWindowTitle(tr("Steps"));
        collDock_->setWindowTitle(tr("Collectives"));
        // Back to A's own tables, or to why they are empty.
        for (QStackedWidget* stack : {stepStack_, collStack_})
            if (stack->currentIndex() == kComparePage)
                stack->setCurrentIndex(static_cast<QLabel*>(stack->widget(1))->text().isEmpty() ? 0 : 1);
        return;
    }
    ComparedRuns runs;
    runs.baseModel = current_.model;
    runs.base = current_.analysis;
    runs.candidate = candidate_.analysis;
    runs.comparison = comparison_ = std::make_shared<const RunComparison>(compareRuns(*runs.base, *runs.candidate));
    stepCompare_->setData(runs);
    collCompare_->setData(runs);
    const QString text = compareText();
    stepCompareLabel_->setText(text);
    collCompareLabel_->setText(text);
    stepDock_->setWindowTitle(tr("Steps: A vs B"));
    collDock_->setWindowTitle(tr("Collectives: A vs B"));
    stepStack_->setCurrentIndex(kComparePage);
    collStack_->setCurrentIndex(kComparePage);
    setWindowTitle(
        tr("overlapscope · %1 vs %2").arg(QFileInfo(current_.path).fileName(), QFileInfo(candidate_.path).fileName()));
}

QString MainWindow::compareText() const {
    if (!comparison_) return {};
    const RunComparison& c = *comparison_;
    QString text = tr("<b>A</b> (base%1): %2 &nbsp; <b>B</b> (candidate): %3")
                       .arg(hasTimeline() ? tr(", on the timeline") : QString())
                       .arg(current_.path.toHtmlEscaped(), candidate_.path.toHtmlEscaped());
    if (const std::string s = summaryText(c); !s.empty())
        text += "<br>" + tr("all devices, A → B: %1").arg(QString::fromStdString(s).toHtmlEscaped());
    text += "<br>" + tr("%1 steps paired (step N with step N of the same device); %2 collectives paired by type, "
                        "group, size and bucket (the k-th of those in the step), %3 only in A, %4 only in B")
                         .arg(c.steps.size())
                         .arg(c.collectivesPaired)
                         .arg(c.onlyInBase)
                         .arg(c.onlyInCandidate);
    for (size_t i = 0; i < std::min(kMaxNotes, c.notes.size()); ++i)
        text += "<br>⚠ " + QString::fromStdString(c.notes[i]).toHtmlEscaped();
    if (c.notes.size() > kMaxNotes) text += tr(" (and %1 more notes)").arg(c.notes.size() - kMaxNotes);
    return text;
}

}  // namespace osc::gui
