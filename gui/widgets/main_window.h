// The application window: timeline in the middle; details, range metrics,
// steps and collectives in docks; a find bar; background loading with a
// progress bar and cancel; recent files and drag and drop. A file with
// results but no trace (partial results, a saved report) puts the
// AnalysisOnlyView in the timeline's place and disables what needs one.
#pragma once

#include "gui/model/kernel_find.h"
#include "gui/model/saved_layout.h"
#include "gui/widgets/capture_loader.h"

#include <QMainWindow>

class QAction;
class QDockWidget;
class QLabel;
class QStackedWidget;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QTableView;
class QTableWidget;
class QToolBar;

namespace osc::gui {

class TimelineWidget;
class StepTableModel;
class CollectiveTableModel;
class StepCompareModel;
class CollectiveCompareModel;
struct RunComparison;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A capture, partial results or a saved report, in the background.
    void openCapture(const QString& path);
    void showLoaded(const LoadedCapture& loaded);
    // False while no timeline is shown: nothing open, or a file without a trace.
    bool hasTimeline() const { return current_.model != nullptr; }
    const LoadedCapture& shown() const { return current_; }  // what is open now
    // Shown in the timeline's place for a file without a trace.
    class AnalysisOnlyView* analysisOnlyView() const {
        return analysisOnly_;
    }
    // The menu actions that act on the timeline, disabled without one.
    const QList<QAction*>& timelineActions() const { return timelineActions_; }
    QAction* alignAction() const { return alignAction_; }
    TimelineWidget* timeline() const { return timeline_; }
    CaptureLoader* loader() const { return loader_; }
    StepTableModel* stepModel() const { return steps_; }
    CollectiveTableModel* collectiveModel() const { return collectives_; }
    class StatisticsPanel* statistics() const {
        return statistics_;
    }
    class HeatMapPanel* heatMap() const {
        return heatMap_;
    }
    // The Selection panel's text (header and per-device table).
    QString selectionSummary() const;
    QString detailsText() const;  // the Details panel, "field: value" per line
    QString findLabelText() const;
    QString statusText() const;
    // Why the Steps / Collectives table is empty, or "" when it is not.
    QString stepsHint() const;
    QString collectivesHint() const;
    // Live: re-read the open capture every `intervalMs` while an agent is
    // still writing it; the view follows the newest activity.
    void setFollowing(bool on, int intervalMs = 1000);
    bool following() const { return following_; }
    // Compare (issue 30 item 1): the open file is run A (base), `path` run B
    // (candidate), loaded in the background; the Steps and Collectives panels
    // then show both runs step by step and the change (main_window_compare.cpp).
    // The timeline stays A's. It lasts until stopComparing(), across reopens.
    void compareWith(const QString& path);
    void showComparison(const LoadedCapture& candidate);  // B already loaded
    void stopComparing();
    bool comparing() const { return candidate_.analysis != nullptr; }
    const LoadedCapture& candidate() const { return candidate_; }
    StepCompareModel* stepCompareModel() const { return stepCompare_; }
    CollectiveCompareModel* collectiveCompareModel() const { return collCompare_; }
    // B's timeline under A's, aligned by step; hidden when not comparing.
    class CompareTimeline* compareTimeline() const {
        return compareTimeline_;
    }
    // The line above both compare tables: A and B, the job's change, notes.
    QString compareText() const;
    // A hang or desync in the open capture (main_window_hang.cpp): the
    // banner over the timeline with the verdict and the capture's warnings.
    class HangBanner* hangBanner() const {
        return hangBanner_;
    }
    // Until the hang analysis of the open capture is shown (screenshots, tests).
    void waitForHangAnalysis();
    // View > Analysis settings (main_window_settings.cpp): the command line's
    // analysis options; applying them re-analyses the open file (and run B),
    // and they are kept per file with its layout.
    class AnalysisSettingsDialog* showAnalysisSettings();
    void applyAnalysisSettings(const AnalysisSettings& settings);
    const AnalysisSettings& analysisSettings() const { return settings_; }
    // Under the Steps table: why a feature found nothing (no steps, no bubbles), "" when nothing is said.
    QString stepsNote() const;
    // File > Attach to live agent…: opens (or raises) the dialog.
    class AttachDialog* showAttachDialog();

    // Find: runs the query and selects the first hit.
    void find(const QString& pattern);
    const FindResult& findResult() const;
    void findNext(int direction);  // +1 next, -1 previous
    long currentHit() const { return currentHit_; }
    // Shows and raises a panel by its object name (details, selection,
    // steps, collectives, statistics, heatmap); false when there is none.
    bool raisePanel(const QString& name);
    // Waits until the tables are sorted and the statistics computed.
    void waitForPanels();
    // A panel table's row was clicked: move there and show its event.
    void jumpToRow(const QModelIndex& index);
    // File > Export: the window as a PNG; a panel's table (details,
    // selection, steps, collectives, ranks, statistics) as CSV. "" on success,
    // else why not.
    QString exportPng(const QString& path);
    QString exportTableCsv(const QString& panel, const QString& path);
    // The table of a panel, by its object name; nullptr when it has none.
    QTableView* panelTable(const QString& panel) const;

protected:
    void closeEvent(QCloseEvent*) override;
    void dragEnterEvent(QDragEnterEvent*) override;
    void dropEvent(QDropEvent*) override;

private:
    void buildMenus();
    void buildDocks();
    void buildFindBar();
    void buildExportMenu(QMenu* file);
    void installCopyOnTables();  // after buildDocks
    void buildCompareMenu(QMenu* file);
    void buildCompareViews();  // pages of the Steps and Collectives stacks
    void refreshComparison();  // after A or B changed
    // Collapsed groups, hidden lanes, lane order and the rank view, per capture path (QSettings).
    QString layoutKey() const;
    void saveLayout();
    // Puts the saved layout on the model; returns it (the rank view is the timeline's to restore).
    SavedLayout restoreLayout();
    void rememberRecent(const QString& path);
    void refreshRecentMenu();
    void updateSelectionPanel();
    void connectHangBanner();
    void buildSettingsViews();  // the Steps note, the menu entry
    // The analysis settings saved with `path`'s layout, on top of the window's alignment.
    AnalysisSettings settingsFor(const QString& path) const;
    void showFindings(const LoadedCapture& loaded);
    // After a load: the banner's warnings at once, the hang analysis started.
    void showHang(const LoadedCapture& loaded, bool refresh);
    void applyHang(const struct HangResult& result);
    void updateDetails(EventRef ref);
    void clearFind();
    void enableTimelineActions(bool timeline, OpenedKind kind);
    // Sizes the bottom panels to the room the lanes leave blank (at least
    // kBottomShareMin of the window, at most kBottomShareMax).
    void fitBottomDocks();
    QAction* timelineAction(QAction* action);  // remembers it among timelineActions_

    QStackedWidget* centre_ = nullptr;  // the timeline frame, or the analysis-only view
    class TimelineFrame* frame_ = nullptr;
    QWidget* timelinePage_ = nullptr;  // frame_ in a splitter with B's timeline (main_window_compare.cpp)
    class CompareTimeline* compareTimeline_ = nullptr;
    class AnalysisOnlyView* analysisOnly_ = nullptr;
    QList<QAction*> timelineActions_;
    TimelineWidget* timeline_ = nullptr;
    QAction* hostAction_ = nullptr;
    CaptureLoader* loader_ = nullptr;
    LoadedCapture current_;
    // How captures are analysed; View > Align clocks on collectives sets
    // alignCollectives and reloads (the lanes then show the shifted clocks).
    AnalysisSettings settings_;
    QAction* alignAction_ = nullptr;
    StepTableModel* steps_ = nullptr;
    CollectiveTableModel* collectives_ = nullptr;
    QTableWidget* details_ = nullptr;
    class SelectionPanel* selectionPanel_ = nullptr;
    class StatisticsPanel* statistics_ = nullptr;
    class HeatMapPanel* heatMap_ = nullptr;
    QDockWidget* heatDock_ = nullptr;
    QTableView* stepView_ = nullptr;
    QStackedWidget* stepStack_ = nullptr;  // the Steps table, or why it is empty
    QDockWidget* stepDock_ = nullptr;
    QStackedWidget* collStack_ = nullptr;
    QDockWidget* collDock_ = nullptr;
    // Comparing: run B, the compare tables (page kComparePage of the stacks) and their headers.
    LoadedCapture candidate_;
    std::shared_ptr<const RunComparison> comparison_;  // of current_ and candidate_, while comparing
    CaptureLoader* compareLoader_ = nullptr;
    QString compareWanted_;  // the run B being loaded; "" when none is awaited
    StepCompareModel* stepCompare_ = nullptr;
    CollectiveCompareModel* collCompare_ = nullptr;
    QLabel* stepCompareLabel_ = nullptr;
    QLabel* collCompareLabel_ = nullptr;
    QAction* stopCompareAction_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* panelsMenu_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    QToolBar* findBar_ = nullptr;
    QLineEdit* findEdit_ = nullptr;
    QLabel* findLabel_ = nullptr;
    class QTimer* followTimer_ = nullptr;
    class QTimer* layoutSaveTimer_ = nullptr;
    QAction* followAction_ = nullptr;
    class AttachDialog* attachDialog_ = nullptr;
    class HangBanner* hangBanner_ = nullptr;
    class AnalysisSettingsDialog* settingsDialog_ = nullptr;
    QLabel* stepsNote_ = nullptr;
    std::optional<ViewRange> keepView_;  // a re-analysis keeps the view
    ViewRange viewAtLoad_;               // the view a capture opened at: a hang reframes it only if unmoved
    bool hangReframes_ = false;          // not on a follow refresh
    bool following_ = false;
    bool reloading_ = false;  // the current load is a follow refresh
    bool loading_ = false;    // a load is running and has not been cancelled
    std::shared_ptr<const FindResult> findResult_;
    QString findPattern_;  // the query behind findResult_, re-run on a follow refresh
    long currentHit_ = -1;
    QString statusBeforeFind_;  // the status line that "hit N of M" replaced
};

}  // namespace osc::gui
