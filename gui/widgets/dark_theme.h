// The dark theme, following the system's (issue 40 item 7). Qt's own widgets
// (menus, panels, tables) take the system's palette by themselves; the
// painted ones (the timeline, the overview strip, the legend, the heat map,
// the hang and what-if panels) are drawn in their light colours and, when
// the application's palette is dark, shown through an effect that inverts
// their lightness and keeps hue and saturation: white becomes near black,
// dark text light, pale tints dark tints of the same colour, while blue
// compute, purple communication, green hidden, vermilion exposed and amber
// waiting keep the meaning they have everywhere else. The palette is
// followed as it changes (a desktop switching to dark at dusk).
#pragma once

#include <QColor>
#include <QGraphicsEffect>

#include <unordered_map>
#include <vector>

class QMainWindow;

namespace osc::gui {

// What a light colour becomes on the dark theme (lightness inverted into
// [0.08, 0.92], hue, saturation and alpha kept).
QRgb darkVariant(QRgb light);

// Whether the application's palette is a dark one (its window colour).
bool paletteIsDark();

class DarkThemeEffect : public QGraphicsEffect {
    Q_OBJECT
public:
    using QGraphicsEffect::QGraphicsEffect;

protected:
    void draw(QPainter* painter) override;

private:
    std::unordered_map<QRgb, QRgb> cache_;  // colours repeat from frame to frame
};

// Puts the effect on `widgets` while the palette is dark, and keeps doing so
// as it changes (watched on `window`).
void followSystemTheme(QMainWindow* window, std::vector<QWidget*> widgets);

}  // namespace osc::gui
