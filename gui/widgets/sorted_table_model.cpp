#include "gui/widgets/sorted_table_model.h"

#include <QCoreApplication>

#include <algorithm>
#include <numeric>
#include <string>

namespace osc::gui {

AsyncSortedTableModel::AsyncSortedTableModel(QObject* parent) : QAbstractTableModel(parent) {}

AsyncSortedTableModel::~AsyncSortedTableModel() { stopWorker(); }

int AsyncSortedTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(order_.size());
}

void AsyncSortedTableModel::resetRows(size_t rows) {
    ++generation_;  // a sort of the old rows must not land on the new ones
    pending_ = false;
    order_.resize(rows);
    std::iota(order_.begin(), order_.end(), 0);
}

void AsyncSortedTableModel::endReset() {
    if (sortColumn_ >= 0 && !order_.empty()) sort(sortColumn_, sortOrder_);
}

void AsyncSortedTableModel::stopWorker() {
    if (worker_) worker_->wait();
}

void AsyncSortedTableModel::waitForSort() {
    while (pending_) {
        if (worker_) worker_->wait();
        QCoreApplication::processEvents();  // runs the queued apply()
    }
}

void AsyncSortedTableModel::sort(int column, Qt::SortOrder sortOrder) {
    sortColumn_ = column;
    sortOrder_ = sortOrder;
    if (column < 0 || order_.empty()) return;
    const uint64_t generation = ++generation_;
    std::function<Keys()> keys = sortKeys(column);
    if (!keys) return;
    const bool descending = sortOrder == Qt::DescendingOrder;
    const size_t n = order_.size();
    // One worker at a time: the previous one finishes (its result is stale).
    if (worker_) worker_->wait();
    QThread* thread = QThread::create([this, generation, keys = std::move(keys), descending, n] {
        const Keys k = keys();
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        if (k.size() == n) {
            // Stable: equal keys keep the model's own (time) order.
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                const double x = k[static_cast<size_t>(a)], y = k[static_cast<size_t>(b)];
                return descending ? x > y : x < y;
            });
        }
        QMetaObject::invokeMethod(
            this, [this, generation, order = std::move(order)]() mutable { apply(generation, std::move(order)); },
            Qt::QueuedConnection);
    });
    worker_ = thread;
    pending_ = true;
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void AsyncSortedTableModel::apply(uint64_t generation, std::vector<int> order) {
    if (generation != generation_ || order.size() != order_.size()) return;
    pending_ = false;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    // Persistent indexes (the view's current and selected rows) follow their rows.
    std::vector<int> newPosition(order.size());
    for (size_t i = 0; i < order.size(); ++i) newPosition[static_cast<size_t>(order[i])] = static_cast<int>(i);
    const QModelIndexList before = persistentIndexList();
    QModelIndexList after;
    after.reserve(before.size());
    for (const QModelIndex& idx : before) {
        const int model = order_[static_cast<size_t>(idx.row())];
        after.push_back(index(newPosition[static_cast<size_t>(model)], idx.column()));
    }
    order_ = std::move(order);
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    emit sortFinished();
}

std::vector<double> rankStrings(const std::vector<std::string>& values) {
    std::vector<size_t> idx(values.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> keys(values.size());
    double rank = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
        if (i > 0 && values[idx[i]] != values[idx[i - 1]]) ++rank;
        keys[idx[i]] = rank;
    }
    return keys;
}

}  // namespace osc::gui
