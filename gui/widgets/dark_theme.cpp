#include "gui/widgets/dark_theme.h"

#include <QApplication>
#include <QEvent>
#include <QMainWindow>
#include <QPainter>
#include <QPointer>

#include <algorithm>

namespace osc::gui {
namespace {

constexpr double kDarkest = 0.08, kLightest = 0.92;

// Re-applies the theme when the palette changes.
class ThemeFollower : public QObject {
public:
    ThemeFollower(QObject* parent, std::vector<QWidget*> widgets) : QObject(parent) {
        for (QWidget* w : widgets) widgets_.push_back(w);
        apply();
    }
    bool eventFilter(QObject*, QEvent* e) override {
        if (e->type() == QEvent::ApplicationPaletteChange || e->type() == QEvent::PaletteChange) apply();
        return false;
    }

private:
    void apply() {
        const bool dark = paletteIsDark();
        for (const QPointer<QWidget>& w : widgets_) {
            if (!w) continue;
            const bool has = qobject_cast<DarkThemeEffect*>(w->graphicsEffect()) != nullptr;
            if (dark && !has) w->setGraphicsEffect(new DarkThemeEffect(w));
            if (!dark && has) w->setGraphicsEffect(nullptr);  // deletes it
        }
    }

    std::vector<QPointer<QWidget>> widgets_;
};

}  // namespace

QRgb darkVariant(QRgb light) {
    float h = 0, s = 0, l = 0, a = 0;
    QColor::fromRgba(light).getHslF(&h, &s, &l, &a);
    const double inverted = kDarkest + (kLightest - kDarkest) * (1.0 - l);
    return QColor::fromHslF(h, s, static_cast<float>(inverted), a).rgba();
}

bool paletteIsDark() { return QApplication::palette().color(QPalette::Window).lightnessF() < 0.5; }

void DarkThemeEffect::draw(QPainter* painter) {
    QPoint offset;
    const QPixmap source = sourcePixmap(Qt::DeviceCoordinates, &offset, QGraphicsEffect::NoPad);
    if (source.isNull()) return;
    QImage image = source.toImage().convertToFormat(QImage::Format_ARGB32);
    for (int y = 0; y < image.height(); ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < image.width(); ++x) {
            auto [it, fresh] = cache_.try_emplace(line[x], 0);
            if (fresh) it->second = darkVariant(line[x]);
            line[x] = it->second;
        }
    }
    if (cache_.size() > 65536) cache_.clear();  // antialiased text makes many greys; keep it bounded
    image.setDevicePixelRatio(source.devicePixelRatio());
    const QTransform world = painter->worldTransform();
    painter->setWorldTransform(QTransform());
    painter->drawImage(offset, image);
    painter->setWorldTransform(world);
}

void followSystemTheme(QMainWindow* window, std::vector<QWidget*> widgets) {
    // The window hears of every change of the application's palette.
    window->installEventFilter(new ThemeFollower(window, std::move(widgets)));
}

}  // namespace osc::gui
