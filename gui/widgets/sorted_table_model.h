// A table model that sorts itself off the GUI thread.
//
// QSortFilterProxyModel compares rows through data() and QVariant on the GUI
// thread: sorting the 580,000 collectives of a 10 M-kernel capture froze the
// window for 6-11 s. Here sort() only starts a worker that computes one
// numeric key per row (from immutable data the subclass captures) and the new
// order; the order is applied as a layout change when it arrives, so painting
// and input go on meanwhile. A newer sort or a reset drops a stale result.
#pragma once

#include <QAbstractTableModel>
#include <QPointer>
#include <QThread>

#include <functional>
#include <memory>
#include <vector>

namespace osc::gui {

class AsyncSortedTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using Keys = std::vector<double>;
    explicit AsyncSortedTableModel(QObject* parent = nullptr);
    ~AsyncSortedTableModel() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    // A sort was asked for and its order has not been applied yet.
    bool sorting() const { return pending_; }
    int sortColumn() const { return sortColumn_; }
    Qt::SortOrder sortOrder() const { return sortOrder_; }
    // Waits for a running sort to be applied (tests, shutdown).
    void waitForSort();

signals:
    void sortFinished();

protected:
    // The model row shown at view row `row`.
    int sourceRow(int row) const { return order_[static_cast<size_t>(row)]; }
    // Call between beginResetModel() and endResetModel() with the new row
    // count; the last sort is started again afterwards by endReset().
    void resetRows(size_t rows);
    void endReset();
    // A function, run on the worker, returning one key per model row for
    // `column`; it must only use data it owns or shares immutably.
    virtual std::function<Keys()> sortKeys(int column) const = 0;

private:
    void apply(uint64_t generation, std::vector<int> order);
    void stopWorker();

    std::vector<int> order_;
    int sortColumn_ = -1;
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
    uint64_t generation_ = 0;
    bool pending_ = false;
    QPointer<QThread> worker_;  // deletes itself when finished
};

// Distinct-string ranks as sort keys: equal strings get equal keys and the
// keys follow the strings' order.
std::vector<double> rankStrings(const std::vector<std::string>& values);

}  // namespace osc::gui
