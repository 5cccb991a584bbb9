// Placeholder until the writer lands.
#include "analyzer/capture/capture_writer.h"
