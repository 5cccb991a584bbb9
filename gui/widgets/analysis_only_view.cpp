#include "gui/widgets/analysis_only_view.h"

#include "analyzer/report/report_format.h"
#include "gui/widgets/device_table.h"
#include "gui/widgets/table_columns.h"

#include <QDir>
#include <QFileInfo>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace osc::gui {
namespace {

// Inputs past this many are counted, not listed: a merged job may name thousands.
constexpr int kListedInputs = 4;

QLabel* textLine(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A wrapped label asks for about 80 characters of width; here it wraps
    // to whatever the window has (a --screenshot --size may be small).
    label->setMinimumWidth(1);
    return label;
}

// Captures of one directory (the usual job) are named once by the directory.
QString madeFromText(const QStringList& inputs) {
    if (inputs.isEmpty()) return {};
    const auto dirOf = [](const QString& input) { return QDir::cleanPath(QFileInfo(input).path()); };
    const QString dir = dirOf(inputs.front());
    const bool oneDir = inputs.size() > 1 &&
                        std::all_of(inputs.begin(), inputs.end(), [&](const QString& i) { return dirOf(i) == dir; });
    QStringList listed;
    for (qsizetype i = 0; i < std::min<qsizetype>(inputs.size(), kListedInputs); ++i)
        listed << (oneDir ? QFileInfo(inputs[i]).fileName() : inputs[i]);
    if (inputs.size() > kListedInputs) listed << QObject::tr("and %1 more").arg(inputs.size() - kListedInputs);
    return oneDir ? QObject::tr("made from %1 captures in %2: %3").arg(inputs.size()).arg(dir, listed.join(", "))
                  : QObject::tr("made from %1").arg(listed.join(", "));
}

}  // namespace

QString noTimelineNotice(const LoadedCapture& loaded) {
    if (loaded.model) return {};
    return QObject::tr("%1: per-step and per-collective results only; open the captures for a timeline")
        .arg(openedKindTitle(loaded.kind, loaded.partialFiles));
}

AnalysisOnlyView::AnalysisOnlyView(QWidget* parent) : QWidget(parent) {
    notice_ = textLine(this);
    QFont bold = notice_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    notice_->setFont(bold);
    madeFrom_ = textLine(this);
    summary_ = textLine(this);
    devices_ = new DeviceTableModel(this);
    view_ = new QTableView(this);
    view_->setModel(devices_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(DeviceTableModel::Device, Qt::AscendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setAlternatingRowColors(true);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    fitColumnsToSample(view_);
    view_->horizontalHeader()->setStretchLastSection(true);
    findings_ = new QPlainTextEdit(this);
    findings_->setReadOnly(true);
    findings_->setPlaceholderText(tr("Select a device for its findings."));
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(view_);
    split->addWidget(findings_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(12, 10, 12, 6);
    layout->addWidget(notice_);
    layout->addWidget(madeFrom_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    connect(view_, &QTableView::clicked, this, [this](const QModelIndex& i) { showFindingsOf(i.row()); });
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showFindingsOf(current.row()); });
}

void AnalysisOnlyView::setLoaded(const LoadedCapture& loaded) {
    analysis_ = loaded.analysis;
    notice_->setText(noTimelineNotice(loaded));
    madeFrom_->setText(madeFromText(loaded.inputs));
    madeFrom_->setToolTip(loaded.inputs.join('\n'));
    madeFrom_->setVisible(!loaded.inputs.isEmpty());
    summary_->setText(analysis_ && !analysis_->devices.empty()
                          ? QString::fromStdString(report::summaryHeadline(*analysis_))
                          : tr("No GPU devices in this file."));
    devices_->setAnalysis(analysis_);
    findings_->clear();
    if (devices_->rowCount() > 0) {
        view_->selectRow(0);
        showFindingsOf(0);
    }
}

void AnalysisOnlyView::showFindingsOf(int viewRow) {
    const int device = devices_->deviceAt(viewRow);
    if (!analysis_ || device < 0) return;
    findings_->setPlainText(
        QString::fromStdString(deviceFindingsText(analysis_->devices[static_cast<size_t>(device)])));
}

QString AnalysisOnlyView::notice() const { return notice_->text(); }
QString AnalysisOnlyView::madeFrom() const { return madeFrom_->text(); }
QString AnalysisOnlyView::summary() const { return summary_->text(); }
QString AnalysisOnlyView::findingsText() const { return findings_->toPlainText(); }

}  // namespace osc::gui
