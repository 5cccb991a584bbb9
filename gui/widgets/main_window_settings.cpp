// MainWindow: the analysis settings in the window (issue 40 item 6). View >
// Analysis settings opens the dialog; Apply analyses the open file again
// with them (run B too when comparing, so the two still compare), keeping
// the view; they are saved per file beside its layout and come back when
// the file opens again. Under the Steps table, a line says why a feature
// found nothing (no steps; no pipeline bubbles once micro-batch settings
// were changed).
#include "gui/widgets/main_window.h"

#include "gui/model/analysis_options.h"
#include "gui/widgets/analysis_settings_dialog.h"
#include "gui/widgets/timeline_widget.h"

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace osc::gui {
namespace {

QString settingsKey(const QString& path) {
    return "analysis/" + QString::fromUtf8(QFileInfo(path).absoluteFilePath().toUtf8().toBase64(
                             QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

}  // namespace

void MainWindow::buildSettingsViews() {
    // The Steps table with a line under it (the stack's first page keeps its place).
    auto* table = qobject_cast<QTableView*>(stepStack_->widget(0));
    stepStack_->removeWidget(table);
    auto* page = new QWidget(stepStack_);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(table, 1);
    table->show();  // the stack hid it as it let go
    stepsNote_ = new QLabel(page);
    stepsNote_->setWordWrap(true);
    stepsNote_->setMargin(4);
    stepsNote_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    stepsNote_->hide();
    layout->addWidget(stepsNote_);
    stepStack_->insertWidget(0, page);
    stepStack_->setCurrentIndex(0);

    QAction* a = viewMenu_->addAction(tr("Analysis &settings…"), this, [this] { showAnalysisSettings(); });
    a->setToolTip(
        tr("Step and micro-batch patterns, extra communication kernels, pipeline stages, peak bus "
           "bandwidth: the command line's analysis options, kept per file"));
    // Beside View > Align clocks on collectives, the other setting of the analysis.
    viewMenu_->insertAction(alignAction_, a);
}

AnalysisSettings MainWindow::settingsFor(const QString& path) const {
    AnalysisSettings s;
    s.alignCollectives = settings_.alignCollectives;
    const QString text = QSettings().value(settingsKey(path)).toString();
    if (!text.isEmpty()) applyAnalysisOptionsJson(text.toStdString(), s);  // damaged: the defaults
    return s;
}

AnalysisSettingsDialog* MainWindow::showAnalysisSettings() {
    if (!settingsDialog_) {
        settingsDialog_ = new AnalysisSettingsDialog(this);
        connect(settingsDialog_, &AnalysisSettingsDialog::applied, this, &MainWindow::applyAnalysisSettings);
    }
    std::optional<AnalysisFindings> findings;
    if (current_.analysis && !loading_)
        findings = analysisFindings(current_.model ? &current_.model->capture() : nullptr, *current_.analysis);
    settingsDialog_->showFor(settings_, findings);
    // Partial results and saved reports were analysed when they were made.
    const bool capture = !current_.path.isEmpty() && current_.kind == OpenedKind::Capture;
    settingsDialog_->setEditable(
        capture, capture                   ? QString()
                 : current_.path.isEmpty() ? tr("Open a capture first: the settings are kept with each file.")
                                           : tr("%1 keeps the settings it was made with: change them where it is made "
                                                "(report --partial, report --format json), or open the captures.")
                                                 .arg(openedKindTitle(current_.kind, current_.partialFiles)));
    settingsDialog_->show();
    settingsDialog_->raise();
    return settingsDialog_;
}

void MainWindow::applyAnalysisSettings(const AnalysisSettings& settings) {
    const bool align = settings_.alignCollectives;
    settings_ = settings;
    settings_.alignCollectives = align;
    if (current_.path.isEmpty()) return;
    QSettings stored;
    const std::string json = analysisOptionsJson(settings_);
    if (json == "{}")
        stored.remove(settingsKey(current_.path));
    else
        stored.setValue(settingsKey(current_.path), QString::fromStdString(json));
    if (hasTimeline()) keepView_ = timeline_->viewRange();
    openCapture(current_.path);
    if (comparing()) compareWith(candidate().path);  // both runs analysed alike, or they would not compare
}

QString MainWindow::stepsNote() const { return stepsNote_->isHidden() ? QString() : stepsNote_->text(); }

void MainWindow::showFindings(const LoadedCapture& loaded) {
    std::string note;
    if (loaded.analysis)
        note = analysisFindings(loaded.model ? &loaded.model->capture() : nullptr, *loaded.analysis).stepsNote;
    // Without steps the table's place already says so; the bubbles are the part left to say.
    const QString text = QString::fromStdString(note);
    stepsNote_->setText(text.isEmpty() ? QString() : text + tr(" View > Analysis settings changes the patterns."));
    stepsNote_->setVisible(!text.isEmpty());
    if (settingsDialog_ && settingsDialog_->isVisible()) showAnalysisSettings();
}

}  // namespace osc::gui
