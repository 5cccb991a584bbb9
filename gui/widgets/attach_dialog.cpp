#include "gui/widgets/attach_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace osc::gui {

AttachDialog::AttachDialog(QWidget* parent, AgentListModel::Discover discover) : QDialog(parent) {
    setWindowTitle(tr("Attach to live agent"));
    model_ = new AgentListModel(this, std::move(discover));
    view_ = new QTableView(this);
    view_->setModel(model_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->verticalHeader()->hide();
    view_->horizontalHeader()->setStretchLastSection(true);

    duration_ = new QDoubleSpinBox(this);
    duration_->setRange(0, 24 * 3600);
    duration_->setDecimals(1);
    duration_->setSuffix(tr(" s"));
    duration_->setSpecialValueText(tr("until stopped"));
    duration_->setToolTip(tr("Stop the capture by itself after this long; 0 = until you press Stop"));

    auto* refreshButton = new QPushButton(tr("&Refresh"), this);
    start_ = new QPushButton(tr("&Start capture"), this);
    stop_ = new QPushButton(tr("S&top capture"), this);
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* controls = new QHBoxLayout;
    controls->addWidget(refreshButton);
    controls->addStretch();
    controls->addWidget(new QLabel(tr("duration"), this));
    controls->addWidget(duration_);
    controls->addWidget(start_);
    controls->addWidget(stop_);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Processes running with the overlapscope agent on this machine "
                                    "(started with <tt>overlapscope run</tt>):"),
                                 this));
    layout->addWidget(view_);
    layout->addLayout(controls);
    layout->addWidget(message_);
    layout->addWidget(close);
    resize(820, 360);

    connect(refreshButton, &QPushButton::clicked, this, &AttachDialog::refresh);
    connect(start_, &QPushButton::clicked, this, &AttachDialog::startSelected);
    connect(stop_, &QPushButton::clicked, this, &AttachDialog::stopSelected);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &AttachDialog::updateButtons);
    connect(model_, &QAbstractItemModel::dataChanged, this, &AttachDialog::updateButtons);
    connect(model_, &QAbstractItemModel::modelReset, this, &AttachDialog::updateButtons);
    refresh();
}

void AttachDialog::setDuration(double seconds) { duration_->setValue(seconds); }

int AttachDialog::selectedRow() const {
    const QModelIndexList rows = view_->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.front().row();
}

QString AttachDialog::lastMessage() const { return message_->text(); }

void AttachDialog::refresh() {
    model_->refresh();
    if (model_->rowCount() == 0) {
        message_->setText(tr("No live agents found. Start a job with <tt>overlapscope run --dormant -- CMD</tt>."));
    } else {
        message_->setText(tr("%1 agent(s).").arg(model_->rowCount()));
        if (selectedRow() < 0) view_->selectRow(0);
    }
    updateButtons();
}

void AttachDialog::updateButtons() {
    const int row = selectedRow();
    const std::string state = row >= 0 ? model_->agentAt(row).reply.status.state : std::string();
    start_->setEnabled(row >= 0 && state != "capturing" && state != "disabled");
    stop_->setEnabled(row >= 0 && state == "capturing");
}

void AttachDialog::showReply(const control::ControlReply& reply, const QString& done) {
    message_->setText(reply.ok ? done : tr("Failed: %1").arg(QString::fromStdString(reply.error)));
    updateButtons();
}

void AttachDialog::startSelected() {
    const int row = selectedRow();
    const double d = duration_->value();
    const control::ControlReply reply = model_->startCapture(row, d > 0 ? std::optional<double>(d) : std::nullopt);
    const QString path = QString::fromStdString(reply.status.output);
    showReply(reply, tr("Capturing to %1").arg(path));
    if (!reply.ok || path.isEmpty()) return;
    if (askBeforeFollowing_) {
        const auto answer = QMessageBox::question(
            this, tr("Capture started"), tr("Capturing to %1.\nOpen it and follow it live in the timeline?").arg(path));
        if (answer != QMessageBox::Yes) return;
    }
    emit followRequested(path);
}

void AttachDialog::stopSelected() {
    const control::ControlReply reply = model_->stopCapture(selectedRow());
    showReply(reply, tr("Stopped; wrote %1").arg(QString::fromStdString(reply.status.output)));
}

}  // namespace osc::gui
