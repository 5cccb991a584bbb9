// The heat map panel: ranks down, time buckets of the timeline's view (or
// steps) across, each cell coloured by its overlap ratio, exposed share or
// lateness. When ranks outnumber pixel rows, a pixel row shows the rank an
// outlier would be (heat_map.h shownRow); a click or tooltip there is about
// that rank.
// Clicking a cell zooms the timeline to it (a step, or ten times closer
// around a time bucket) and scrolls to that rank.
#pragma once

#include "gui/model/heat_map.h"

#include <QImage>
#include <QWidget>

#include <memory>

class QComboBox;

namespace osc::gui {

class TimelineWidget;

class HeatMapView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kLabelWidth = 110, kHeaderHeight = 18;
    HeatMapView(TimelineWidget* timeline, QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const Analysis> analysis);
    void setMode(bool perStep, HeatMetric metric);
    HeatMetric metric() const { return metric_; }
    // The map as shown; brought up to date first when it was left stale while hidden.
    const HeatMap& heatMap() const;
    // Builds the map and the image for the current size and view (the bench
    // times this: it runs whenever the view moves while the map is shown).
    void rebuild();
    // The heat map row (device) and column at a widget point, or -1s. Where
    // a pixel row stands for several ranks: the one it shows.
    std::pair<int, int> cellAt(QPoint p) const;
    // Widget rectangle of a cell's first pixel row (tests click there).
    QPoint cellCentre(int row, int column) const;
    // Every how many rows a rank label is drawn (1: all of them), and the
    // header line, which says so when not every row has its label.
    int labelStride() const;
    QString headerText() const;

signals:
    void cellClicked(int group, osc::gui::ViewRange window);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void showEvent(QShowEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    bool event(QEvent*) override;

private:
    void rebuildWhenShown();
    int pixelRows() const;
    QString rowLabel(int row) const;
    int rowOfPixel(int y) const;                   // first device row drawn at pixel row y (from the cell area top)
    std::pair<int, int> rowsOfPixel(int y) const;  // the device rows [first, last) pixel row y stands for
    QString valueText(float v) const;
    const RankLateness* lateness();
    double columnWidth() const;

    TimelineWidget* timeline_;
    std::shared_ptr<const Analysis> analysis_;
    bool perStep_ = false;
    HeatMetric metric_ = HeatMetric::OverlapRatio;
    HeatMap map_;
    bool stale_ = false;                            // the view or capture changed while hidden
    std::vector<float> medians_;                    // per column, when ranks outnumber pixel rows
    std::shared_ptr<const RankLateness> lateness_;  // of analysis_, made when first shown
    QImage image_;                                  // one pixel per column and pixel row
};

class HeatMapPanel : public QWidget {
    Q_OBJECT
public:
    HeatMapPanel(TimelineWidget* timeline, QWidget* parent = nullptr);
    HeatMapView* view() const { return view_; }
    // Columns per step (else per time bucket of the view), as the user picks it.
    void setPerStep(bool perStep);
    void setMetric(HeatMetric metric);

private:
    void apply();
    HeatMapView* view_;
    QComboBox* mode_;
    QComboBox* metric_;
};

// The cell colour: overlap ratio 0 vermilion, 0.5 white, 1 green; exposed
// share 0 white to 1 vermilion; mid grey where there is no communication.
// Lateness (value a share of the map's full scale) 0 white to 1 indigo; a
// pale grey where no collective starts.
uint32_t heatColour(float value, HeatMetric metric);

}  // namespace osc::gui
