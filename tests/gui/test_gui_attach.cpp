// The Attach dialog's agent list and start/stop requests, against stub agents:
// the agent's real ControlServer in this process, on a private socket
// directory, with a small hand-written state machine behind it. So the model
// talks the real protocol over real sockets, and every answer is known.
#include "agent/core/control_server.h"
#include "analyzer/load/load_capture.h"
#include "gui/widgets/agent_list_model.h"
#include "gui/widgets/attach_dialog.h"
#include "tests/agent/agent_test_util.h"
#include "tests/support/temp_dir.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSignalSpy>
#include <QTableView>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

using namespace osc;
using namespace osc::gui;

namespace {

// One fake agent: dormant until started; a start names a new output file.
class StubAgent {
public:
    StubAgent(const std::string& dir, int64_t pid, int rank) {
        status_.pid = pid;
        status_.rank = rank;
        status_.host = "testhost";
        status_.state = "dormant";
        status_.commandLine = "python train.py";
        outDir_ = dir;
        agent::ControlServer::Options o;
        o.directory = dir;
        o.pid = pid;
        server_ = std::make_unique<agent::ControlServer>(
            o, [this](const control::ControlRequest& r) { return handle(r); },
            [this] {
                std::lock_guard lock(mutex_);
                return status_;
            });
        std::string error;
        started_ = server_->start(error);
        EXPECT_TRUE(started_) << error;
    }
    std::optional<double> lastDuration() {
        std::lock_guard lock(mutex_);
        return lastDuration_;
    }

private:
    control::ControlReply handle(const control::ControlRequest& r) {
        std::lock_guard lock(mutex_);
        control::ControlReply reply;
        if (r.command == control::ControlCommand::Start) {
            if (status_.state == "capturing") {
                reply.error = "already capturing";
            } else {
                status_.state = "capturing";
                status_.output = outDir_ + "/capture-" + std::to_string(++status_.captures) + ".sqlite";
                lastDuration_ = r.durationS;
                reply.ok = true;
            }
        } else if (r.command == control::ControlCommand::Stop) {
            if (status_.state != "capturing") {
                reply.error = "not capturing";
            } else {
                status_.state = "stopped";
                reply.ok = true;
            }
        } else {
            reply.ok = true;
        }
        reply.status = status_;
        return reply;
    }

    std::mutex mutex_;
    control::AgentStatus status_;
    std::optional<double> lastDuration_;
    std::string outDir_;
    bool started_ = false;
    std::unique_ptr<agent::ControlServer> server_;
};

class AttachTest : public ::testing::Test {
protected:
    void TearDown() override { agents.clear(); }
    AgentListModel::Discover discover() const {
        return [dir = sockets] { return control::discoverAgents(dir); };
    }
    // Live pids are needed: discovery drops sockets of dead processes.
    void addAgent(int64_t pid, int rank) { agents.push_back(std::make_unique<StubAgent>(sockets, pid, rank)); }

    const testsupport::TempDir scratch;
    const std::string root = scratch.path(), sockets = root + "/sock";
    std::vector<std::unique_ptr<StubAgent>> agents;
};

QString cell(const QAbstractItemModel& m, int row, int column) { return m.data(m.index(row, column)).toString(); }

}  // namespace

TEST_F(AttachTest, ListsEveryLiveAgentWithPidRankStateAndOutput) {
    AgentListModel model(nullptr, discover());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.refresh();
    EXPECT_EQ(model.rowCount(), 0);
    addAgent(::getpid(), 3);
    addAgent(::getppid(), 0);
    model.refresh();
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.columnCount(), AgentListModel::ColumnCount);
    // Ordered by pid.
    const int64_t lo = std::min<int64_t>(::getpid(), ::getppid());
    EXPECT_EQ(cell(model, 0, AgentListModel::Pid), QString::number(lo));
    const int ours = lo == ::getpid() ? 0 : 1;
    EXPECT_EQ(cell(model, ours, AgentListModel::Rank), "3");
    EXPECT_EQ(cell(model, 1 - ours, AgentListModel::Rank), "0");
    EXPECT_EQ(cell(model, ours, AgentListModel::State), "dormant");
    EXPECT_EQ(cell(model, ours, AgentListModel::Output), "");
    EXPECT_EQ(cell(model, ours, AgentListModel::Host), "testhost");
    EXPECT_EQ(model.headerData(AgentListModel::Output, Qt::Horizontal).toString(), "output file");
    // A refresh with the same agents keeps the rows (updated in place).
    model.refresh();
    EXPECT_EQ(model.rowCount(), 2);
    // An agent going away disappears on the next refresh.
    agents.erase(agents.begin());
    model.refresh();
    EXPECT_EQ(model.rowCount(), 1);
}

TEST_F(AttachTest, StartAndStopChangeTheAgentAndTheRow) {
    addAgent(::getpid(), 1);
    AgentListModel model(nullptr, discover());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.refresh();
    ASSERT_EQ(model.rowCount(), 1);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    control::ControlReply r = model.startCapture(0, 2.5);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.status.output, sockets + "/capture-1.sqlite");
    EXPECT_EQ(agents[0]->lastDuration(), std::optional<double>(2.5));
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "capturing");
    EXPECT_EQ(cell(model, 0, AgentListModel::Output), QString::fromStdString(sockets + "/capture-1.sqlite"));
    EXPECT_GE(changed.count(), 1);

    // Refused while capturing: an error reply, and the row still tells the truth.
    r = model.startCapture(0);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "already capturing");
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "capturing");

    r = model.stopCapture(0);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "stopped");
    model.refresh();  // what the agent says now, asked afresh
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "stopped");

    r = model.startCapture(0);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(agents[0]->lastDuration(), std::nullopt);  // until stopped
    EXPECT_EQ(cell(model, 0, AgentListModel::Output), QString::fromStdString(sockets + "/capture-2.sqlite"));
}

TEST_F(AttachTest, AnAgentThatVanishedGivesAnErrorReplyNotAnException) {
    addAgent(::getpid(), 0);
    AgentListModel model(nullptr, discover());
    model.refresh();
    ASSERT_EQ(model.rowCount(), 1);
    agents.clear();  // socket gone
    const control::ControlReply r = model.startCapture(0);
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.error.empty());
    EXPECT_FALSE(model.stopCapture(5).ok);  // no such row
}

TEST_F(AttachTest, DialogStartsTheSelectedAgentAndOffersToFollowItsFile) {
    addAgent(::getpid(), 2);
    AttachDialog dialog(nullptr, discover());
    dialog.setAskBeforeFollowing(false);
    ASSERT_EQ(dialog.model()->rowCount(), 1);
    EXPECT_EQ(dialog.selectedRow(), 0);  // the first agent is preselected
    QSignalSpy follow(&dialog, &AttachDialog::followRequested);
    dialog.setDuration(0);
    dialog.startSelected();
    ASSERT_EQ(follow.count(), 1);
    EXPECT_EQ(follow.at(0).at(0).toString(), QString::fromStdString(sockets + "/capture-1.sqlite"));
    EXPECT_EQ(agents[0]->lastDuration(), std::nullopt);
    EXPECT_TRUE(dialog.lastMessage().contains("Capturing to")) << dialog.lastMessage().toStdString();
    dialog.startSelected();  // refused: already capturing, no second follow
    EXPECT_EQ(follow.count(), 1);
    EXPECT_TRUE(dialog.lastMessage().contains("already capturing"));
    dialog.stopSelected();
    EXPECT_EQ(cell(*dialog.model(), 0, AgentListModel::State), "stopped");
    dialog.setDuration(1.5);
    dialog.startSelected();
    EXPECT_EQ(agents[0]->lastDuration(), std::optional<double>(1.5));
    EXPECT_EQ(follow.count(), 2);
}

// End to end: fake_job loads the fake agent library the way the CUDA driver
// loads the real one, dormant; the model finds it, starts and stops a capture,
// and the file it names holds the captured kernels.
TEST_F(AttachTest, StartsAndStopsARealAgentProcess) {
    const std::string out = root + "/out";
    std::filesystem::create_directories(out);  // `overlapscope run` does this for a real job
    osc::agent::test::Child job({OSC_TEST_FAKE_JOB, "30", "0"},
                                {{"CUDA_INJECTION64_PATH", OSC_TEST_FAKE_AGENT},
                                 {"OVERLAPSCOPE_DORMANT", "1"},
                                 {"OVERLAPSCOPE_SOCKET_DIR", sockets},
                                 {"OVERLAPSCOPE_OUTPUT_DIR", out},
                                 {"OVERLAPSCOPE_COMMIT_MS", "100"},
                                 {"OVERLAPSCOPE_FAKE_RATE", "20000"},
                                 {"OVERLAPSCOPE_AGENT", ""}},
                                root + "/job.log");
    AgentListModel model(nullptr, discover());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_TRUE(osc::agent::test::waitUntil([&] {
        model.refresh();
        return model.rowCount() == 1;
    })) << job.output();
    EXPECT_EQ(cell(model, 0, AgentListModel::Pid), QString::number(job.pid()));
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "dormant");

    const control::ControlReply started = model.startCapture(0);
    ASSERT_TRUE(started.ok) << started.error;
    const std::string file = started.status.output;
    EXPECT_EQ(file.rfind(out, 0), 0u) << file;
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "capturing");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const control::ControlReply stopped = model.stopCapture(0);
    ASSERT_TRUE(stopped.ok) << stopped.error;
    model.refresh();
    EXPECT_EQ(cell(model, 0, AgentListModel::State), "stopped");
    EXPECT_EQ(cell(model, 0, AgentListModel::Output), QString::fromStdString(file));
    EXPECT_GT(osc::loadCapture(file).kernelCount(), 0u);
    ::kill(job.pid(), SIGTERM);
    EXPECT_GE(job.waitExitCode(), 0);
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
