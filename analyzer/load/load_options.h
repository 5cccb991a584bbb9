// LoadOptions and LoadCancelled belong to the readers: they are declared in
// analyzer/capture/load_options.h. This header only forwards there for
// analyzer/pipeline/analyze_inputs.h, which still includes it by this name;
// remove it once that include names analyzer/capture/load_options.h.
#pragma once

#include "analyzer/capture/load_options.h"
