// Analysis > Settings (issue 40 item 6): the command line's analysis options
// in the window (step and micro-batch patterns, extra communication kernels,
// copies as communication, pipeline stages, peak bus bandwidth). Apply
// re-analyses the open capture (and run B when comparing) with them; the
// window keeps them per file with its layout. Under each field, what the
// analysis found with it (gui/model/analysis_options.h), and why where it
// found nothing.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/analysis_options.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace osc::gui {

class AnalysisSettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit AnalysisSettingsDialog(QWidget* parent = nullptr);
    // The settings the open file was analysed with, and what that found
    // (nullopt: nothing open, or still loading).
    void showFor(const AnalysisSettings& settings, const std::optional<AnalysisFindings>& findings);
    // Partial results and saved reports keep the settings they were made
    // with: the fields are shown, not applied, and `why` says so.
    void setEditable(bool editable, const QString& why = {});
    // The fields on top of the settings shown (alignment and the finding thresholds stay).
    AnalysisSettings edited() const;
    // Why the fields cannot be applied, "" when they can.
    QString error() const;
    // Apply, as the button does: `applied` unless the fields hold an error.
    bool apply();

signals:
    void applied(const osc::AnalysisSettings& settings);

private:
    void check();

    AnalysisSettings shown_;
    QLineEdit* step_ = nullptr;
    QLineEdit* microbatch_ = nullptr;
    QPlainTextEdit* commKernels_ = nullptr;
    QCheckBox* commCopies_ = nullptr;
    QSpinBox* stages_ = nullptr;
    QLineEdit* peak_ = nullptr;
    QLabel *stepFound_ = nullptr, *microbatchFound_ = nullptr, *commFound_ = nullptr, *stagesFound_ = nullptr,
           *peakFound_ = nullptr;
    QLabel* error_ = nullptr;
    QPushButton* applyButton_ = nullptr;
    bool editable_ = true;
};

}  // namespace osc::gui
