#include "gui/widgets/whatif_panel.h"

#include "analyzer/capture/freed_memory.h"
#include "gui/model/whatif_plot.h"
#include "gui/render/palette.h"
#include "gui/widgets/tab_dock.h"

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QPainter>
#include <QPainterPath>
#include <QThread>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace osc::gui {
namespace {

QColor rgb(uint32_t c) { return QColor::fromRgb(c); }

void polyline(QPainter& p, const std::vector<PlotPoint>& pts) {
    if (pts.empty()) return;
    QPainterPath path({pts[0].x, pts[0].y});
    for (size_t i = 1; i < pts.size(); ++i) path.lineTo(pts[i].x, pts[i].y);
    p.drawPath(path);
}

}  // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 200);
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, rgb(palette::kBackground));
    setPalette(pal);
    message_ = tr("Open a capture to predict other bucket sizes.");
}

WhatIfPanel::~WhatIfPanel() {
    for (const QPointer<QThread>& w : workers_)
        if (w) w->wait();
}

std::vector<double> WhatIfPanel::bucketSizes() { return {1, 2, 5, 10, 25, 50, 100, 250}; }

void WhatIfPanel::setData(std::shared_ptr<TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    result_.reset();
    ++generation_;
    pending_ = 0;
    // The prediction replays the kernels; partial results and saved reports have none.
    stale_ = model_ != nullptr;
    message_ = model_      ? tr("Computing…")
               : analysis_ ? tr("The what-if prediction replays the capture's kernels: open the captures this file "
                                "was made from.")
                           : tr("Open a capture to predict other bucket sizes.");
    if (isVisible()) computeInBackground();
    update();
}

void WhatIfPanel::compute() {
    if (!stale_ || !model_ || !analysis_) return;
    stale_ = false;
    whatif::WhatIfSettings settings;
    settings.bucketMb = bucketSizes();
    try {
        setResult(whatif::runWhatIf(model_->capture(), *analysis_, settings));
    } catch (const std::exception& e) {
        result_.reset();
        message_ = QString::fromStdString(e.what());
        update();
    }
}

void WhatIfPanel::computeInBackground() {
    if (!stale_ || !model_ || !analysis_) return;
    stale_ = false;
    ++pending_;
    // The worker holds the capture and the analysis (both immutable) for as
    // long as it runs; an older worker is not waited for, its result dropped.
    QThread* thread =
        QThread::create([this, capture = model_->sharedCapture(), analysis = analysis_, generation = generation_] {
            whatif::WhatIfSettings settings;
            settings.bucketMb = bucketSizes();
            std::optional<whatif::WhatIfResult> result;
            QString error;
            try {
                result = whatif::runWhatIf(*capture, *analysis, settings);
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            returnFreedMemory();  // every rank's step models
            QMetaObject::invokeMethod(
                this,
                [this, generation, result = std::move(result), error]() mutable {
                    if (generation != generation_) return;
                    --pending_;
                    if (result) {
                        setResult(std::move(*result));
                    } else {
                        result_.reset();
                        message_ = error;
                        update();
                    }
                },
                Qt::QueuedConnection);
        });
    workers_.erase(std::remove(workers_.begin(), workers_.end(), nullptr), workers_.end());
    workers_.push_back(thread);
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void WhatIfPanel::waitForResult() {
    while (pending_ > 0) {
        for (const QPointer<QThread>& w : workers_)
            if (w) w->wait();
        QCoreApplication::processEvents();
    }
}

void WhatIfPanel::setResult(whatif::WhatIfResult result) {
    result_ = std::move(result);
    std::string why;
    if (whatIfSeries(*result_, &why))
        message_.clear();
    else if (whatif::modelMisfit(*result_))
        // The CLI's refusal, word for word: no plot, no "best" size.
        message_ = tr("No prediction for this capture: %1. `overlapscope whatif` refuses it too (--force models it "
                      "anyway).")
                       .arg(QString::fromStdString(why));
    else
        message_ = tr("Not modelled: %1").arg(QString::fromStdString(why));
    update();
}

void WhatIfPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    computeInBackground();
}

void WhatIfPanel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), rgb(palette::kBackground));
    std::optional<WhatIfSeries> series;
    if (result_) series = whatIfSeries(*result_);
    if (!series) {
        p.setPen(rgb(palette::kText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, message_);
        return;
    }
    const WhatIfPlot plot = layoutWhatIfPlot(*series, width(), height());
    const QFontMetrics fm(font());
    const int line = fm.height();
    const int textWidth = width() - 12;

    // Grid and tick labels.
    p.setPen(QPen(rgb(palette::kGrid), 1));
    for (const auto& t : plot.yTicks) p.drawLine(QPointF(plot.left, t.pos), QPointF(plot.right, t.pos));
    for (const auto& t : plot.xTicks) p.drawLine(QPointF(t.pos, plot.top), QPointF(t.pos, plot.bottom));
    p.setPen(rgb(palette::kText));
    for (const auto& t : plot.yTicks) {
        const QString s = QString::fromStdString(t.label);
        p.drawText(QPointF(plot.left - 6 - fm.horizontalAdvance(s), t.pos + fm.ascent() / 2.0 - 1), s);
    }
    for (const auto& t : plot.xTicks) {
        const QString s = QString::fromStdString(t.label);
        p.drawText(QPointF(t.pos - fm.horizontalAdvance(s) / 2.0, plot.bottom + fm.ascent() + 3), s);
    }
    const QString xTitle = QString::fromStdString(plot.xTitle), yTitle = QString::fromStdString(plot.yTitle);
    p.drawText(QPointF(plot.xTitleAt.x - fm.horizontalAdvance(xTitle) / 2.0, plot.xTitleAt.y), xTitle);
    p.save();
    p.translate(plot.yTitleAt.x, plot.yTitleAt.y);
    p.rotate(-90);
    p.drawText(QPointF(-fm.horizontalAdvance(yTitle) / 2.0, fm.ascent() / 2.0), yTitle);
    p.restore();

    // Bounds dashed (exposed colour above: no overlap; overlap colour below:
    // perfect overlap), the prediction solid in the communication colour.
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(rgb(palette::kExposed), 1.5, Qt::DashLine));
    polyline(p, plot.noOverlap);
    p.setPen(QPen(rgb(palette::kOverlap), 1.5, Qt::DashLine));
    polyline(p, plot.perfect);
    p.setPen(QPen(rgb(palette::kCommunication), 2.5));
    polyline(p, plot.step);
    p.setBrush(rgb(palette::kCommunication));
    for (const auto& pt : plot.step) p.drawEllipse(QPointF(pt.x, pt.y), 3, 3);
    if (plot.best >= 0) {
        const PlotPoint& b = plot.step[static_cast<size_t>(plot.best)];
        p.setPen(QPen(rgb(palette::kHighlight), 2));
        p.setBrush(rgb(palette::kHighlight));
        p.drawEllipse(QPointF(b.x, b.y), 6, 6);
    }
    if (plot.observed) {
        p.setPen(QPen(rgb(palette::kText), 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QPointF(plot.observed->x, plot.observed->y), 7, 7);
    }

    // Title, a legend in the lines' colours, and the caption.
    p.setPen(rgb(palette::kText));
    p.drawText(QPointF(6, 4 + fm.ascent()),
               fm.elidedText(QString::fromStdString(plot.title), Qt::ElideRight, textWidth));
    double x = 6;
    const double legendY = 4 + line + fm.ascent();
    const auto legendItem = [&](uint32_t colour, Qt::PenStyle style, const QString& text) {
        p.setPen(QPen(rgb(colour), 2, style));
        p.drawLine(QPointF(x, legendY - fm.ascent() / 2.0 + 1), QPointF(x + 18, legendY - fm.ascent() / 2.0 + 1));
        p.setPen(rgb(palette::kText));
        p.drawText(QPointF(x + 22, legendY), text);
        x += 22 + fm.horizontalAdvance(text) + 14;
    };
    legendItem(palette::kCommunication, Qt::SolidLine, tr("predicted"));
    legendItem(palette::kExposed, Qt::DashLine, tr("no overlap"));
    legendItem(palette::kOverlap, Qt::DashLine, tr("perfect overlap"));
    // The markers as the plot draws them: a ring, and a dot in the highlight colour.
    const double markY = legendY - fm.ascent() / 2.0 + 1;
    p.setPen(QPen(rgb(palette::kText), 2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(QPointF(x + 5, markY), 5, 5);
    p.setPen(rgb(palette::kText));
    p.drawText(QPointF(x + 14, legendY), tr("observed"));
    x += 14 + fm.horizontalAdvance(tr("observed")) + 14;
    p.setPen(QPen(rgb(palette::kHighlight), 2));
    p.setBrush(rgb(palette::kHighlight));
    p.drawEllipse(QPointF(x + 5, markY), 5, 5);
    p.setPen(rgb(palette::kText));
    p.drawText(QPointF(x + 14, legendY), tr("best"));
    p.drawText(QPointF(6, height() - 6.0 - line),
               fm.elidedText(QString::fromStdString(plot.caption), Qt::ElideRight, textWidth));
    p.drawText(QPointF(6, height() - 6.0), fm.elidedText(QString::fromStdString(plot.fit), Qt::ElideRight, textWidth));
}

WhatIfPanel* addWhatIfDock(QMainWindow* window, QMenu* viewMenu) {
    auto* panel = new WhatIfPanel(window);
    viewMenu->addSeparator();
    addTabDock(window, viewMenu, panel,
               {QObject::tr("What-if: bucket sizes"), "whatif", QObject::tr("&What-if: bucket sizes"),
                QObject::tr("Predicted step time for other DDP bucket sizes (overlapscope whatif)")});
    return panel;
}

}  // namespace osc::gui
