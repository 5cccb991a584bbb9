// A capture analysed and annotated as the window's loader leaves it, for
// window tests that build their captures in memory.
#pragma once

#include "analyzer/crossrank/analyze.h"
#include "gui/model/timeline_model.h"
#include "gui/widgets/capture_loader.h"

#include <QString>

#include <memory>

namespace osc::guitest {

inline gui::LoadedCapture analysed(std::shared_ptr<Capture> capture, const QString& path = "memory") {
    gui::LoadedCapture l;
    l.model = std::make_shared<gui::TimelineModel>(capture);
    l.analysis = std::make_shared<Analysis>(analyze(*capture));
    l.model->addStepLanes(*l.analysis);
    l.model->annotate(*l.analysis);
    l.path = path;
    return l;
}

}  // namespace osc::guitest
