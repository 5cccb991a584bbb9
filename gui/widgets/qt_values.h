// Our plain values as Qt wants them: the palette's 0xRRGGBB colours as
// QColor, nanoseconds as a QVariant that sorts as a number in table models.
#pragma once

#include "analyzer/capture/model.h"

#include <QColor>
#include <QVariant>

#include <cstdint>

namespace osc::gui {

inline QColor qcolour(uint32_t rgb, int alpha = 255) {
    QColor c = QColor::fromRgb(0xFF000000u | rgb);
    c.setAlpha(alpha);
    return c;
}

inline QVariant nsValue(TimeNs v) { return QVariant::fromValue<qint64>(v); }

}  // namespace osc::gui
