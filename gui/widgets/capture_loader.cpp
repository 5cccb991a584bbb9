#include "gui/widgets/capture_loader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/freed_memory.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/crossrank/clock_alignment.h"
#include "analyzer/load/load_capture.h"

#include <QMetaObject>

#include <future>

namespace osc::gui {

LoadedCapture loadForViewing(const QString& path, const AnalysisSettings& settings, const std::atomic<bool>* cancel,
                             const std::function<void(double, const QString&)>& progress) {
    if (const OpenedKind kind = openedKind(path); kind != OpenedKind::Capture) {
        AnalysisOnly only = loadAnalysisOnly(path, kind, settings.alignCollectives, cancel, progress);
        LoadedCapture out;
        out.path = path;
        out.kind = kind;
        out.analysis = std::move(only.analysis);
        out.inputs = std::move(only.inputs);
        out.partialFiles = only.partialFiles;
        if (progress) progress(1.0, QObject::tr("done"));
        return out;
    }
    LoadOptions options;
    // The window shows a kernel's grid and block, never its registers,
    // shared memory or graph ids: 20 bytes a kernel less (55 MB at 1,024
    // ranks), and the analysis reads no more either.
    options.launchShapeOnly = true;
    options.cancel = cancel;
    options.progress = [&](double f, std::string_view stage) {
        // Reading is most of the work; building and analysing share the rest.
        if (progress) progress(0.8 * f, QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size())));
    };
    auto capture = std::make_shared<Capture>(loadCapture(path.toStdString(), options));
    if (options.cancelled()) throw LoadCancelled{};
    // What the readers freed goes back to the system before the lanes and the
    // analysis grow the heap again: a 1,024-rank job's peak is 70 MB lower.
    returnFreedMemory();
    // --align collectives: the lanes show the shifted clocks, so shift the
    // capture itself, then analyse it as it now stands.
    std::vector<TimeNs> shifts;
    AnalysisSettings analysisSettings = settings;
    if (settings.alignCollectives) {
        if (progress) progress(0.8, QObject::tr("aligning clocks"));
        shifts = crossrank::alignOnCollectives(*capture, settings);
        analysisSettings.alignCollectives = false;
    }
    // Lanes and analysis only read the capture: build them side by side.
    if (progress) progress(0.8, QObject::tr("building lanes and analysing"));
    auto analysing = std::async(std::launch::async, [&] { return analyze(*capture, analysisSettings); });
    LoadedCapture out;
    out.path = path;
    try {
        out.model = std::make_shared<TimelineModel>(capture, analysisSettings);
    } catch (...) {
        analysing.wait();
        throw;
    }
    if (progress) progress(0.9, QObject::tr("analysing"));
    auto analysis = std::make_shared<Analysis>(analysing.get());
    if (options.cancelled()) throw LoadCancelled{};
    if (settings.alignCollectives) {
        analysis->settings.alignCollectives = true;
        for (auto& d : analysis->devices)
            d.clock_shift_ns =
                static_cast<size_t>(d.processIndex) < shifts.size() ? shifts[static_cast<size_t>(d.processIndex)] : 0;
    }
    out.analysis = analysis;
    out.model->addStepLanes(*out.analysis);
    out.model->annotate(*out.analysis);
    returnFreedMemory();  // the analysis's and the lanes' scratch
    if (progress) progress(1.0, QObject::tr("done"));
    return out;
}

CaptureLoader::CaptureLoader(QObject* parent) : QObject(parent) { qRegisterMetaType<osc::gui::LoadedCapture>(); }

CaptureLoader::~CaptureLoader() {
    cancel();
    waitForIdle();
}

void CaptureLoader::start(const QString& path, const AnalysisSettings& settings) {
    cancel();
    waitForIdle();
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    auto flag = cancel_;
    // The worker talks back only through queued invocations on `this`, and
    // the destructor waits for it, so `this` outlives every call.
    thread_ = QThread::create([this, path, settings, flag] {
        try {
            auto result = loadForViewing(path, settings, flag.get(), [this](double f, const QString& s) {
                QMetaObject::invokeMethod(
                    this, [this, f, s] { emit progress(f, s); }, Qt::QueuedConnection);
            });
            if (flag->load()) return;
            // Checked again on delivery: a cancel clicked while the result
            // waited in the queue (a fast load) still wins.
            QMetaObject::invokeMethod(
                this,
                [this, result, flag] {
                    if (!flag->load()) emit loaded(result);
                },
                Qt::QueuedConnection);
        } catch (const LoadCancelled&) {
        } catch (const CaptureError& e) {
            const QString msg = QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this, [this, msg] { emit failed(msg); }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            const QString msg = path + ": " + QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this, [this, msg] { emit failed(msg); }, Qt::QueuedConnection);
        }
    });
    thread_->setParent(this);
    connect(thread_, &QThread::finished, this, [this, t = thread_] {
        t->deleteLater();
        if (thread_ == t) thread_ = nullptr;
    });
    thread_->start();
}

void CaptureLoader::cancel() {
    if (cancel_) cancel_->store(true);
}

void CaptureLoader::waitForIdle() {
    // The thread object is a child of this loader and deletes itself later
    // through the finished() connection; here we only wait for it.
    if (thread_) {
        thread_->wait();
        thread_ = nullptr;
    }
}

}  // namespace osc::gui
