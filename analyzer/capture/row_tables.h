// A row of the record stream (capture_writer.h) appended to its table in
// memory, as the capture reader would hold it: the synthesizer's in-memory
// captures and the agent's per-step capture both build tables from rows.
#pragma once

#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/model.h"
#include "analyzer/capture/string_table.h"

namespace osc {

void appendRow(CopyTable& table, const CopyRow& row);
void appendRow(MemsetTable& table, const MemsetRow& row);
// Its names interned into `strings`, the table's capture's.
void appendRow(CollectiveTable& table, StringTable& strings, const CollectiveRow& row);

}  // namespace osc
