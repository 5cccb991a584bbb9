// One line under the timeline saying what each colour means.
#pragma once

#include <QWidget>

#include <cstdint>
#include <vector>

namespace osc::gui {

class LegendBar : public QWidget {
    Q_OBJECT
public:
    // What a capture must hold for an entry to mean anything on its timeline.
    enum class Shown { Always, WithSendReceive, WithPipeline };
    struct Entry {
        uint32_t rgb;
        QString text;
        bool outline;        // drawn as an outline (find hits, matches), not a fill
        bool hatch = false;  // drawn as the pipeline bubble's hatch
        Shown shown = Shown::Always;
    };
    explicit LegendBar(QWidget* parent = nullptr);
    // The entries shown: those of colours the capture can draw (a DDP job's
    // legend names no send arrows or pipeline bubbles).
    const std::vector<Entry>& entries() const { return shown_; }
    // `apiFamilies` names the host calls ("CUDA", "HIP", "CUDA and HIP").
    void setCaptureHas(bool sendReceive, bool pipeline, const QString& apiFamilies = QStringLiteral("CUDA"));
    QSize sizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent*) override;

private:
    // Lays the entries out in lines of `width`; returns the lines used.
    int layoutLines(int width, std::vector<QPoint>* at) const;
    std::vector<Entry> all_, shown_;
};

}  // namespace osc::gui
