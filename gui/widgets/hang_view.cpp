#include "gui/widgets/hang_view.h"

#include "analyzer/capture/freed_memory.h"
#include "analyzer/hang/hang.h"
#include "gui/render/palette.h"
#include "gui/widgets/qt_values.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QThread>
#include <QToolButton>

namespace osc::gui {
namespace {

// At most this many warnings are listed; the rest are in the tooltip.
constexpr int kShownWarnings = 3;

// The slot of a group's overlap lane (or of its one row per rank), or nullptr.
const LaneSlot* overlapSlot(const TimelineView& v, int group) {
    for (const LaneSlot& s : v.layout->lanes())
        if (s.group == group && (s.rankRow || v.model->lane(s.lane).kind == LaneKind::Overlap)) return &s;
    return nullptr;
}

void label(QPainter& p, QRectF box, const QString& text, uint32_t rgb) {
    const QFontMetricsF fm(p.font());
    const QString shown = fm.elidedText(text, Qt::ElideRight, box.width());
    if (shown.size() < 4) return;
    p.setPen(qcolour(rgb));
    p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft, shown);
}

}  // namespace

HangBanner::HangBanner(QWidget* parent) : QWidget(parent) {
    setObjectName("hangBanner");
    setAutoFillBackground(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 4, 4, 4);
    text_ = new QLabel(this);
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(text_, 1);
    goButton_ = new QPushButton(tr("Go to the stuck call"), this);
    goButton_->setToolTip(tr("Frame the view on the call the ranks wait in, with the calls before it"));
    progressButton_ = new QPushButton(tr("Collective progress"), this);
    progressButton_->setToolTip(tr("Each rank's progress through its collectives (overlapscope hang)"));
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("×"));
    close->setToolTip(tr("Hide this banner (it comes back with the next capture)"));
    close->setAutoRaise(true);
    layout->addWidget(goButton_, 0, Qt::AlignTop);
    layout->addWidget(progressButton_, 0, Qt::AlignTop);
    layout->addWidget(close, 0, Qt::AlignTop);
    connect(goButton_, &QPushButton::clicked, this, &HangBanner::goToStuckCall);
    connect(progressButton_, &QPushButton::clicked, this, &HangBanner::showProgress);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    hide();
}

HangBanner::~HangBanner() { waitForWorkers(); }

void HangBanner::waitForWorkers() {
    for (const QPointer<QThread>& w : workers_)
        if (w) w->wait();
    workers_.clear();
}

void HangBanner::setCapture(std::shared_ptr<TimelineModel> model, const QStringList& warnings) {
    const uint64_t generation = ++generation_;
    warnings_ = warnings;
    focus_.reset();
    refresh();
    if (!model) return;
    // A previous capture's analysis is not waited for (a follow refresh comes
    // every second): it finishes on its own and its result is dropped.
    std::erase_if(workers_, [](const QPointer<QThread>& w) { return w.isNull(); });
    // The result is posted to this banner (its destructor waits for every worker).
    QThread* thread = QThread::create([self = this, model, generation] {
        HangResult result;
        result.model = model;
        try {
            // The analysis itself (every rank's sequence of calls) is freed
            // here: the window keeps only what it shows.
            const hang::HangAnalysis analysis = hang::analyzeHang(&model->capture(), {});
            result.focus = std::make_shared<const HangFocus>(hangFocus(*model, analysis));
            result.progress = std::make_shared<const HangProgress>(hangProgress(analysis));
        } catch (const std::exception& e) {
            result.error = e.what();  // no verdict: the Collective progress panel says why
        }
        returnFreedMemory();  // every rank's calls
        QMetaObject::invokeMethod(
            self,
            [self, generation, result] {
                if (generation != self->generation_) return;
                if (result.focus) {
                    self->focus_ = result.focus;
                    self->refresh();
                }
                emit self->analysed(result);
            },
            Qt::QueuedConnection);
    });
    workers_.push_back(thread);
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void HangBanner::waitForResult() {
    waitForWorkers();
    QCoreApplication::processEvents();
}

QString HangBanner::headline() const {
    return focus_ && focus_->found() ? QString::fromStdString(focus_->headline) : QString();
}

QString HangBanner::warningsText() const { return warnings_.join('\n'); }

void HangBanner::refresh() {
    const bool found = focus_ && focus_->found();
    const bool hung = found && focus_->verdict == hang::Verdict::Hang;
    QStringList lines;
    if (found) {
        QString head = QString::fromStdString(focus_->headline).toHtmlEscaped();
        // The verdict word in bold: "HANG:", "DESYNC:".
        if (const qsizetype colon = head.indexOf(':'); colon > 0)
            head = "<b>" + head.left(colon + 1) + "</b>" + head.mid(colon + 1);
        lines << head;
    }
    for (qsizetype i = 0; i < std::min<qsizetype>(kShownWarnings, warnings_.size()); ++i)
        lines << QStringLiteral("⚠ ") + warnings_[i].toHtmlEscaped();
    if (warnings_.size() > kShownWarnings) lines << tr("⚠ and %1 more warnings").arg(warnings_.size() - kShownWarnings);
    text_->setText(lines.join("<br>"));
    text_->setToolTip(warnings_.size() > kShownWarnings ? warningsText() : QString());
    goButton_->setVisible(found && focus_->frame.has_value());
    progressButton_->setVisible(found);
    // The verdict's colour as the Collective progress panel paints it, faded to a background.
    const QColor accent = qcolour(!found ? palette::kEmptyText : hung ? palette::kExposed : palette::kExposedWait);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, QColor::fromRgbF(accent.redF() * 0.18f + 0.82f, accent.greenF() * 0.18f + 0.82f,
                                                    accent.blueF() * 0.18f + 0.82f));
    pal.setColor(QPalette::WindowText, QColor(0x20, 0x25, 0x2B));
    setPalette(pal);
    text_->setPalette(pal);
    setStyleSheet(QStringLiteral("#hangBanner { border-left: 6px solid %1; }").arg(accent.name()));
    setVisible(found || !warnings_.isEmpty());
}

void paintHangWaits(QPainter& p, const TimelineView& v, const HangFocus& focus) {
    if (!v.model || !v.layout) return;
    FrameBuilder fb(*v.model, *v.layout);
    p.save();
    p.setClipRect(v.labelWidth, v.rulerHeight, v.width - v.labelWidth, v.height - v.rulerHeight);
    const auto x = [&](TimeNs t) { return v.labelWidth + v.vp.scale.toX(t); };
    for (const HangWait& w : focus.waits) {
        // The kernel: a dashed amber outline, waiting rather than moving data.
        if (w.kernel.valid() && !v.layout->oneRow())
            if (auto r = fb.eventRect(v.vp, w.kernel)) {
                p.setPen(QPen(qcolour(palette::kExposedWait), 2, Qt::DashLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(QRectF(r->x, r->y + 1, std::max(2.f, r->w), r->h - 2));
            }
        const LaneSlot* s = overlapSlot(v, w.group);
        if (!s) continue;
        const double y = v.vp.top + s->y, x0 = std::max<double>(v.labelWidth, x(w.start));
        const double x1 = std::min<double>(v.width, x(w.end));
        if (x1 <= x0) continue;
        p.fillRect(QRectF(x(w.start), y, 2, s->height), qcolour(palette::kExposed));
        if (s->height >= 10)
            label(p, QRectF(x0 + 5, y, x1 - x0 - 8, s->height),
                  QString::fromStdString(w.call) + QObject::tr(": waiting, never completed") +
                      (x(w.end) > v.width ? QStringLiteral(" →") : QString()),
                  palette::kText);
    }
    for (const HangStuck& st : focus.stuck) {
        const LaneSlot* s = overlapSlot(v, st.group);
        if (!s) continue;
        const double at = x(st.at), y = v.vp.top + s->y;
        if (at < v.labelWidth || at > v.width) continue;
        p.setPen(QPen(qcolour(palette::kExposed), 2, Qt::DashLine));
        p.drawLine(QPointF(at, y), QPointF(at, y + s->height));
        if (s->height >= 10)
            label(p, QRectF(at + 5, y, v.width - at - 8, s->height),
                  QObject::tr("never entered %1").arg(QString::fromStdString(st.call)), palette::kExposed);
    }
    p.restore();
}

}  // namespace osc::gui
