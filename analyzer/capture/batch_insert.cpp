#include "analyzer/capture/batch_insert.h"

#include <algorithm>

namespace osc::sql {
namespace {

std::string insertSql(const std::string& table, const std::string& columns, int columnCount, int rows) {
    std::string row = "(";
    for (int c = 0; c < columnCount; ++c) row += c ? ",?" : "?";
    row += ")";
    std::string sql = "INSERT INTO " + table + (columns.empty() ? "" : " " + columns) + " VALUES ";
    for (int r = 0; r < rows; ++r) sql += (r ? "," : "") + row;
    return sql;
}

}  // namespace

namespace {
// No more parameters in one statement than this SQLite build allows.
int fitRows(const Database& db, int columnCount, int wanted) {
    const int limit = sqlite3_limit(db.get(), SQLITE_LIMIT_VARIABLE_NUMBER, -1);
    return std::max(1, std::min(wanted, limit / columnCount));
}
}  // namespace

BatchInsert::BatchInsert(const Database& db, const std::string& table, const std::string& columns, int columnCount,
                         int wantedRows)
    : columns_(columnCount), rowsPerStatement_(fitRows(db, columnCount, wantedRows)) {
    many_ = Statement(db, insertSql(table, columns, columnCount, rowsPerStatement_));
    one_ = Statement(db, insertSql(table, columns, columnCount, 1));
    values_.assign(static_cast<size_t>(columnCount) * static_cast<size_t>(rowsPerStatement_), 0);
    nulls_.assign(static_cast<size_t>(rowsPerStatement_), 0);
    manyBound_.init(values_.size());
    oneBound_.init(static_cast<size_t>(columnCount));
}

void BatchInsert::bindRows(Statement& s, Bound& bound, int rows) {
    sqlite3_stmt* st = s.get();
    size_t index = 0;  // parameter index - 1
    for (int r = 0; r < rows; ++r) {
        const int64_t* v = &values_[static_cast<size_t>(r) * columns_];
        const uint64_t nulls = nulls_[r];
        for (int c = 0; c < columns_; ++c, ++index) {
            const int parameter = static_cast<int>(index) + 1;
            if (nulls >> c & 1) {
                if (!bound.isNull[index]) {
                    sqlite3_bind_null(st, parameter);
                    bound.isNull[index] = 1;
                }
            } else if (bound.isNull[index] || bound.value[index] != v[c]) {
                sqlite3_bind_int64(st, parameter, v[c]);
                bound.value[index] = v[c];
                bound.isNull[index] = 0;
            }
        }
        nulls_[r] = 0;
    }
    s.run();
}

void BatchInsert::flush() {
    const int rows = pending_;
    pending_ = 0;  // on failure the rows are dropped, not inserted twice
    if (rows == rowsPerStatement_) {
        bindRows(many_, manyBound_, rows);
    } else {
        // A partial batch: one row at a time, shifting each into slot 0.
        for (int r = 0; r < rows; ++r) {
            if (r) {
                std::copy_n(&values_[static_cast<size_t>(r) * columns_], columns_, values_.begin());
                nulls_[0] = nulls_[r];
                nulls_[r] = 0;
            }
            bindRows(one_, oneBound_, 1);
        }
    }
}

}  // namespace osc::sql
