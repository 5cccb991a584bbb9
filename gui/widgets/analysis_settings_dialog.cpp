#include "gui/widgets/analysis_settings_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace osc::gui {
namespace {

QLabel* foundLabel(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = l->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    l->setFont(f);
    l->setForegroundRole(QPalette::PlaceholderText);
    return l;
}

// A field with what the analysis found under it.
QWidget* withFindings(QWidget* field, QLabel* found, QWidget* parent) {
    auto* box = new QWidget(parent);
    box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);  // a spin box's row as wide as the others
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 4);
    layout->setSpacing(2);
    layout->addWidget(field);
    layout->addWidget(found);
    return box;
}

}  // namespace

AnalysisSettingsDialog::AnalysisSettingsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Analysis settings"));
    setObjectName("analysisSettings");
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    step_ = new QLineEdit(this);
    step_->setToolTip(
        tr("Regex for step range names (NVTX, profiler annotations), searched in the name: "
           "--step-pattern"));
    microbatch_ = new QLineEdit(this);
    microbatch_->setToolTip(
        tr("Regex for pipeline micro-batch range names; group 1 the phase (f… forward, b… "
           "backward), group 2 the number: --microbatch-pattern"));
    commKernels_ = new QPlainTextEdit(this);
    commKernels_->setPlaceholderText(tr("one regex per line, searched in the demangled kernel name"));
    commKernels_->setFixedHeight(commKernels_->fontMetrics().height() * 4);
    commKernels_->setToolTip(
        tr("Also count these kernels as communication (NCCL, RCCL and the libraries "
           "recognised by name always count): --comm-kernel"));
    commCopies_ = new QCheckBox(tr("host↔device copies count as communication (--comm-copies)"), this);
    stages_ = new QSpinBox(this);
    stages_->setRange(0, 65536);
    stages_->setSpecialValueText(tr("from the capture"));
    stages_->setToolTip(
        tr("Stages S of the theoretical bubble (S−1)/(M+S−1); from the capture: the devices "
           "that ran micro-batches (--pipeline-stages)"));
    peak_ = new QLineEdit(this);
    peak_->setPlaceholderText(tr("from the GPU model"));
    peak_->setToolTip(
        tr("Peak bus bandwidth of every link in GB/s, for collectives that cross nodes "
           "(--peak-busbw-gbps)"));
    stepFound_ = foundLabel(this);
    microbatchFound_ = foundLabel(this);
    commFound_ = foundLabel(this);
    stagesFound_ = foundLabel(this);
    peakFound_ = foundLabel(this);
    form->addRow(tr("Step ranges"), withFindings(step_, stepFound_, this));
    form->addRow(tr("Micro-batch ranges"), withFindings(microbatch_, microbatchFound_, this));
    form->addRow(tr("Extra communication kernels"), withFindings(commKernels_, commFound_, this));
    form->addRow(QString(), commCopies_);
    form->addRow(tr("Pipeline stages"), withFindings(stages_, stagesFound_, this));
    form->addRow(tr("Peak bus bandwidth, GB/s"), withFindings(peak_, peakFound_, this));
    error_ = new QLabel(this);
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #B03618"));
    auto* buttons = new QDialogButtonBox(
        QDialogButtonBox::Apply | QDialogButtonBox::RestoreDefaults | QDialogButtonBox::Close, this);
    applyButton_ = buttons->button(QDialogButtonBox::Apply);
    applyButton_->setToolTip(tr("Analyse the open file again with these settings; they are kept with its layout"));
    connect(applyButton_, &QPushButton::clicked, this, &AnalysisSettingsDialog::apply);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this, [this] {
        AnalysisSettings defaults;
        defaults.alignCollectives = shown_.alignCollectives;
        const AnalysisSettings keep = shown_;
        showFor(defaults, std::nullopt);
        shown_ = keep;  // still what the file was analysed with, until Apply
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);
    for (QLineEdit* e : {step_, microbatch_, peak_}) {
        connect(e, &QLineEdit::textChanged, this, &AnalysisSettingsDialog::check);
        connect(e, &QLineEdit::returnPressed, this, &AnalysisSettingsDialog::apply);
    }
    connect(commKernels_, &QPlainTextEdit::textChanged, this, &AnalysisSettingsDialog::check);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(error_);
    layout->addWidget(buttons);
    resize(620, sizeHint().height());
}

void AnalysisSettingsDialog::showFor(const AnalysisSettings& s, const std::optional<AnalysisFindings>& findings) {
    shown_ = s;
    step_->setText(QString::fromStdString(s.stepPattern));
    microbatch_->setText(QString::fromStdString(s.microbatchPattern));
    QStringList kernels;
    for (const std::string& k : s.commKernelPatterns) kernels << QString::fromStdString(k);
    commKernels_->setPlainText(kernels.join('\n'));
    commCopies_->setChecked(s.commCopies);
    stages_->setValue(s.pipelineStages);
    peak_->setText(s.peakBusBwGbps ? QString::number(*s.peakBusBwGbps) : QString());
    const auto say = [&findings](QLabel* l, std::string AnalysisFindings::*f, const QString& none) {
        const QString text = findings ? QString::fromStdString((*findings).*f) : QString();
        l->setText(findings ? (text.isEmpty() ? none : tr("found: %1").arg(text))
                            : tr("(shown after the file is analysed)"));
    };
    say(stepFound_, &AnalysisFindings::steps, {});
    say(microbatchFound_, &AnalysisFindings::microbatches, {});
    say(commFound_, &AnalysisFindings::commKernels, tr("none set"));
    say(stagesFound_, &AnalysisFindings::stages, {});
    say(peakFound_, &AnalysisFindings::peak, {});
    check();
    // Tall enough for the findings' lines at this width.
    layout()->activate();
    resize(width(), std::max(height(), layout()->totalHeightForWidth(width())));
}

AnalysisSettings AnalysisSettingsDialog::edited() const {
    AnalysisSettings s = shown_;
    s.stepPattern = step_->text().toStdString();
    s.microbatchPattern = microbatch_->text().toStdString();
    s.commKernelPatterns.clear();
    for (const QString& line : commKernels_->toPlainText().split('\n'))
        if (!line.trimmed().isEmpty()) s.commKernelPatterns.push_back(line.trimmed().toStdString());
    s.commCopies = commCopies_->isChecked();
    s.pipelineStages = stages_->value();
    bool ok = false;
    const double peak = peak_->text().trimmed().toDouble(&ok);
    s.peakBusBwGbps = peak_->text().trimmed().isEmpty() ? std::nullopt
                      : ok                              ? std::optional<double>(peak)
                                                        : std::optional<double>(-1.0);  // refused by the check
    return s;
}

QString AnalysisSettingsDialog::error() const {
    const auto e = analysisOptionsError(edited());
    return e ? QString::fromStdString(*e) : QString();
}

void AnalysisSettingsDialog::setEditable(bool editable, const QString& why) {
    editable_ = editable;
    for (QWidget* w : std::initializer_list<QWidget*>{step_, microbatch_, commKernels_, commCopies_, stages_, peak_})
        w->setEnabled(editable);
    check();
    if (!editable) {
        error_->setText(why);
        error_->setVisible(!why.isEmpty());
    }
}

void AnalysisSettingsDialog::check() {
    const QString e = error();
    error_->setText(e);
    error_->setVisible(!e.isEmpty());
    applyButton_->setEnabled(e.isEmpty() && editable_);
}

bool AnalysisSettingsDialog::apply() {
    check();
    if (!error().isEmpty() || !editable_) return false;
    shown_ = edited();
    emit applied(shown_);
    return true;
}

}  // namespace osc::gui
