// One line under the timeline saying what each colour means.
#pragma once

#include <QWidget>

#include <cstdint>
#include <vector>

namespace osc::gui {

class LegendBar : public QWidget {
    Q_OBJECT
public:
    struct Entry {
        uint32_t rgb;
        QString text;
        bool outline;  // drawn as an outline (find hits, matches), not a fill
    };
    explicit LegendBar(QWidget* parent = nullptr);
    const std::vector<Entry>& entries() const { return entries_; }
    QSize sizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent*) override;

private:
    // Lays the entries out in lines of `width`; returns the lines used.
    int layoutLines(int width, std::vector<QPoint>* at) const;
    std::vector<Entry> entries_;
};

}  // namespace osc::gui
