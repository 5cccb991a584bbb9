#include "analyzer/capture/schema.h"

namespace osc::schema {
// Filled in with the capture reader and writer.
const char* const kCreateTables[] = {""};
const int kCreateTableCount = 0;
const char* const kCreateIndexes[] = {""};
const int kCreateIndexCount = 0;
}  // namespace osc::schema
