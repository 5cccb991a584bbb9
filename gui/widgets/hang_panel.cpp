#include "gui/widgets/hang_panel.h"

#include "analyzer/hang/hang.h"
#include "gui/render/palette.h"
#include "gui/widgets/tab_dock.h"

#include <QAction>
#include <QDockWidget>
#include <QHelpEvent>
#include <QMainWindow>
#include <QMenu>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace osc::gui {
namespace {

QColor rgb(uint32_t c) { return QColor::fromRgb(c); }

constexpr int kMargin = 8;
constexpr int kCellGap = 2;
constexpr int kMaxCell = 16;
constexpr int kMinCell = 5;
constexpr int kBlockGap = 14;

uint32_t verdictColour(const std::string& verdict) {
    return verdict == "hang" ? palette::kExposed : verdict == "desync" ? palette::kExposedWait : palette::kOverlap;
}

uint32_t stateColour(ProgressState s) {
    switch (s) {
        case ProgressState::Completed:
            return palette::kOverlap;
        case ProgressState::Waiting:
            return palette::kExposedWait;
        case ProgressState::NotEntered:
            return palette::kBackground;
    }
    return palette::kBackground;
}

// Where everything goes for a width: computed the same way for painting,
// the size hint and tooltips.
struct Layout {
    QRect paragraph;
    int labelWidth = 0, cell = kMaxCell, line = 0;
    struct Block {
        int top = 0, headerTop = 0, rowsTop = 0;
    };
    std::vector<Block> blocks;
    int legendTop = 0, height = 0;

    int columnX(int c) const { return kMargin + labelWidth + c * (cell + kCellGap); }
    int rowY(const Block& b, int r) const { return b.rowsTop + r * (cell + kCellGap); }
};

// The widest row label: measured once per progress, not per layout (a
// thousand ranks' labels took tens of milliseconds each time).
int widestLabel(const HangProgress& p, const QFontMetrics& fm) {
    int widest = 0;
    for (const auto& b : p.blocks)
        for (const auto& r : b.rows) {
            // Stuck ranks' labels are bold.
            const int w = fm.horizontalAdvance(QString::fromStdString(r.label));
            widest = std::max(widest, r.stuck ? w + w / 8 + 4 : w);
        }
    return widest;
}

Layout layoutFor(const HangProgress& p, const QFontMetrics& fm, int width, int widest) {
    Layout l;
    l.line = fm.height();
    const int textWidth = std::max(120, width - 2 * kMargin);
    const QString paragraph = QString::fromStdString(p.paragraph);
    l.paragraph = fm.boundingRect(QRect(kMargin, kMargin, textWidth, 100000), Qt::TextWordWrap, paragraph);
    l.paragraph.setWidth(textWidth);
    size_t columns = 1;
    for (const auto& b : p.blocks) columns = std::max(columns, b.columns.size());
    l.labelWidth = std::min(260, widest + 12);
    // Cells shrink to fit the columns, leaving room for a short summary.
    const int room = width - 2 * kMargin - l.labelWidth - 160;
    l.cell = std::clamp(room / static_cast<int>(columns) - kCellGap, kMinCell, kMaxCell);
    int y = l.paragraph.bottom() + kBlockGap;
    for (const auto& b : p.blocks) {
        Layout::Block g;
        g.top = y;
        g.headerTop = y + l.line + 4;
        g.rowsTop = g.headerTop + l.line + 2;
        l.blocks.push_back(g);
        y = g.rowsTop + static_cast<int>(b.rows.size()) * (l.cell + kCellGap) + kBlockGap;
    }
    l.legendTop = y;
    l.height = y + l.line + kMargin;
    return l;
}

}  // namespace

HangProgressView::HangProgressView(QWidget* parent) : QWidget(parent) {
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, rgb(palette::kBackground));
    setPalette(pal);
    setMouseTracking(true);
    message_ = tr("Open a capture to see each rank's progress through its collectives.");
}

void HangProgressView::setProgress(std::optional<HangProgress> progress, QString message) {
    progress_ = std::move(progress);
    message_ = std::move(message);
    widestLabel_ = progress_ ? widestLabel(*progress_, QFontMetrics(font())) : 0;
    setMinimumHeight(layoutHeight(std::max(width(), 320)));
    updateGeometry();
    update();
}

int HangProgressView::layoutHeight(int w) const {
    if (!progress_) return 120;
    return layoutFor(*progress_, QFontMetrics(font()), w, widestLabel_).height;
}

QSize HangProgressView::sizeHint() const { return {640, layoutHeight(640)}; }

QRect HangProgressView::cellRect(size_t block, size_t row, size_t column) const {
    if (!progress_ || block >= progress_->blocks.size() || row >= progress_->blocks[block].rows.size() ||
        column >= progress_->blocks[block].columns.size())
        return {};
    const Layout l = layoutFor(*progress_, QFontMetrics(font()), width(), widestLabel_);
    return {l.columnX(static_cast<int>(column)), l.rowY(l.blocks[block], static_cast<int>(row)), l.cell, l.cell};
}

void HangProgressView::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    setMinimumHeight(layoutHeight(width()));
}

void HangProgressView::paintEvent(QPaintEvent* e) {
    QPainter p(this);
    p.fillRect(rect(), rgb(palette::kBackground));
    if (!progress_) {
        p.setPen(rgb(palette::kEmptyText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, message_);
        return;
    }
    const HangProgress& hp = *progress_;
    const QFontMetrics fm(font());
    const Layout l = layoutFor(hp, fm, width(), widestLabel_);

    // The verdict in its colour, then what `overlapscope hang` says.
    p.fillRect(QRect(0, l.paragraph.top() - 4, 4, l.paragraph.height() + 8), rgb(verdictColour(hp.verdict)));
    p.setPen(rgb(palette::kText));
    p.drawText(l.paragraph, Qt::TextWordWrap, QString::fromStdString(hp.paragraph));

    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics boldFm(bold);
    for (size_t bi = 0; bi < hp.blocks.size(); ++bi) {
        const ProgressBlock& b = hp.blocks[bi];
        const Layout::Block& g = l.blocks[bi];
        p.setFont(bold);
        p.setPen(rgb(palette::kHeaderText));
        p.drawText(QPointF(kMargin, g.top + boldFm.ascent()),
                   boldFm.elidedText(QString::fromStdString(b.title), Qt::ElideRight, width() - 2 * kMargin));
        p.setFont(font());
        // Column labels where they fit; the hung call's always.
        const int labelEvery = std::max(1, (fm.horizontalAdvance("#0000") + 4) / (l.cell + kCellGap));
        for (size_t c = 0; c < b.columns.size(); ++c) {
            const ProgressColumn& col = b.columns[c];
            if (!col.hung && c % static_cast<size_t>(labelEvery) != 0) continue;
            p.setPen(rgb(col.hung ? palette::kExposed : palette::kEmptyText));
            p.drawText(QPointF(l.columnX(static_cast<int>(c)), g.headerTop + fm.ascent()),
                       QString::fromStdString(col.label));
        }
        if (b.hiddenBefore > 0) {
            p.setPen(rgb(palette::kEmptyText));
            const QString more = tr("%1 earlier").arg(b.hiddenBefore);
            p.drawText(QPointF(kMargin + l.labelWidth - fm.horizontalAdvance(more) - 6, g.headerTop + fm.ascent()),
                       more);
        }
        // Only the rows in the part being painted: the scroll area shows a
        // page of a thousand ranks' rows.
        const int pitch = l.cell + kCellGap;
        const size_t firstRow = static_cast<size_t>(std::max(0, (e->rect().top() - g.rowsTop) / pitch));
        const size_t endRow =
            std::min(b.rows.size(), static_cast<size_t>(std::max(0, (e->rect().bottom() - g.rowsTop) / pitch + 1)));
        for (size_t r = firstRow; r < endRow; ++r) {
            const ProgressRow& row = b.rows[r];
            const int y = l.rowY(g, static_cast<int>(r));
            p.setFont(row.stuck ? bold : font());
            p.setPen(rgb(row.stuck ? palette::kExposed : palette::kText));
            const QFontMetrics& rfm = row.stuck ? boldFm : fm;
            p.drawText(QPointF(kMargin, y + (l.cell + rfm.ascent()) / 2.0 - 1),
                       rfm.elidedText(QString::fromStdString(row.label), Qt::ElideRight, l.labelWidth - 8));
            p.setFont(font());
            for (size_t c = 0; c < row.cells.size(); ++c) {
                const QRect cell(l.columnX(static_cast<int>(c)), y, l.cell, l.cell);
                // The call a stuck rank never entered is the missing piece.
                const bool missing = row.stuck && b.columns[c].hung && row.cells[c] == ProgressState::NotEntered;
                p.fillRect(cell, rgb(missing ? palette::kExposed : stateColour(row.cells[c])));
                if (row.cells[c] == ProgressState::NotEntered && !missing) {
                    p.setPen(rgb(palette::kGrid));
                    p.drawRect(cell.adjusted(0, 0, -1, -1));
                }
            }
            p.setPen(rgb(palette::kEmptyText));
            const int textX = l.columnX(static_cast<int>(b.columns.size())) + 6;
            p.drawText(QPointF(textX, y + (l.cell + fm.ascent()) / 2.0 - 1),
                       fm.elidedText(QString::fromStdString(row.summary), Qt::ElideRight,
                                     std::max(0, width() - textX - kMargin)));
        }
        // The hung call's column outlined, a desynced one dashed.
        const int rowsBottom = l.rowY(g, static_cast<int>(b.rows.size())) - kCellGap;
        for (size_t c = 0; c < b.columns.size(); ++c) {
            if (!b.columns[c].hung && !b.columns[c].desync) continue;
            const QRect box(l.columnX(static_cast<int>(c)) - 2, g.rowsTop - 2, l.cell + 3, rowsBottom - g.rowsTop + 3);
            p.setBrush(Qt::NoBrush);
            p.setPen(b.columns[c].hung ? QPen(rgb(palette::kExposed), 2)
                                       : QPen(rgb(palette::kExposedWait), 2, Qt::DashLine));
            p.drawRect(box);
        }
    }

    // Legend.
    int x = kMargin;
    const int y = l.legendTop;
    const auto item = [&](uint32_t fill, bool outline, const QString& text) {
        const QRect swatch(x, y + (fm.height() - 10) / 2, 10, 10);
        p.fillRect(swatch, rgb(fill));
        if (outline) {
            p.setPen(rgb(palette::kGrid));
            p.drawRect(swatch.adjusted(0, 0, -1, -1));
        }
        p.setPen(rgb(palette::kText));
        p.drawText(QPointF(x + 14, y + fm.ascent()), text);
        x += 14 + fm.horizontalAdvance(text) + 14;
    };
    item(palette::kOverlap, false, tr("completed"));
    item(palette::kExposedWait, false, tr("entered, waiting"));
    item(palette::kBackground, true, tr("not entered"));
    item(palette::kExposed, false, tr("never entered the call the others wait in (outlined)"));
}

bool HangProgressView::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip || !progress_) return QWidget::event(e);
    const auto* help = static_cast<QHelpEvent*>(e);
    const Layout l = layoutFor(*progress_, QFontMetrics(font()), width(), widestLabel_);
    for (size_t bi = 0; bi < progress_->blocks.size(); ++bi) {
        const ProgressBlock& b = progress_->blocks[bi];
        const Layout::Block& g = l.blocks[bi];
        const int c = (help->pos().x() - l.columnX(0)) / (l.cell + kCellGap);
        const int r = (help->pos().y() - g.rowsTop) / (l.cell + kCellGap);
        if (help->pos().y() < g.rowsTop || help->pos().x() < l.columnX(0) || c >= static_cast<int>(b.columns.size()) ||
            r >= static_cast<int>(b.rows.size()))
            continue;
        const ProgressRow& row = b.rows[static_cast<size_t>(r)];
        const ProgressState s = row.cells[static_cast<size_t>(c)];
        const QString state = s == ProgressState::Completed ? tr("completed")
                              : s == ProgressState::Waiting ? tr("entered, not completed")
                                                            : tr("never entered");
        QToolTip::showText(help->globalPos(), QString::fromStdString(row.label) + "\n" +
                                                  QString::fromStdString(b.columns[static_cast<size_t>(c)].tooltip) +
                                                  ": " + state);
        return true;
    }
    QToolTip::hideText();
    e->ignore();
    return true;
}

HangPanel::HangPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    scroll_ = new QScrollArea(this);
    scroll_->setWidgetResizable(true);
    view_ = new HangProgressView(scroll_);
    scroll_->setWidget(view_);
    layout->addWidget(scroll_);
}

void HangPanel::setData(std::shared_ptr<TimelineModel> model, bool hasAnalysisOnly) {
    model_ = std::move(model);
    stale_ = model_ != nullptr;
    if (elsewhere_ && model_ && view_->progress().has_value()) return;  // until the worker's result lands
    view_->setProgress(std::nullopt, model_ ? tr("Analysing…")
                                     : hasAnalysisOnly
                                         ? tr("Collective progress needs the captures themselves (their plugin rows "
                                              "and kernels): open them, or run `overlapscope hang` on them.")
                                         : tr("Open a capture to see each rank's progress through its collectives."));
    if (isVisible() && !elsewhere_) compute();
}

void HangPanel::compute() {
    if (!stale_ || !model_) return;
    try {
        setAnalysis(hang::analyzeHang(&model_->capture(), {}));
    } catch (const std::exception& e) {
        setFailure(QString::fromStdString(e.what()));
    }
}

void HangPanel::setAnalysis(const hang::HangAnalysis& analysis) { setProgress(hangProgress(analysis)); }

void HangPanel::setFailure(const QString& why) {
    stale_ = false;
    view_->setProgress(std::nullopt, why);
}

void HangPanel::setProgress(HangProgress progress) {
    stale_ = false;
    if (progress.blocks.empty()) {
        view_->setProgress(std::nullopt, tr("No collectives in this capture."));
        return;
    }
    view_->setProgress(std::move(progress), {});
}

void HangPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (!elsewhere_) compute();
}

HangPanel* addHangDock(QMainWindow* window, QMenu* viewMenu) {
    auto* panel = new HangPanel(window);
    addTabDock(window, viewMenu, panel,
               {QObject::tr("Collective progress"), "hang", QObject::tr("&Collective progress (hangs)"),
                QObject::tr("Each rank's progress through its collectives; which rank a stuck job waits for "
                            "(overlapscope hang)")});
    return panel;
}

}  // namespace osc::gui
