// Run B's timeline aligned to run A's by step, worked by hand.
//
// A's steps: [100, 200), [300, 450), [500, 600).
// B's steps: [1000, 1150), [1250, 1350), [1500, 1700), [1800, 1900).
// Paired by order: offsets B - A are 900, 950 and 1000; B's fourth step
// pairs with nothing.
#include "gui/model/step_alignment.h"

#include <gtest/gtest.h>

using namespace osc::gui;

namespace {

StepAlignment handWorked() {
    return StepAlignment({{100, 200}, {300, 450}, {500, 600}},
                         {{1000, 1150}, {1250, 1350}, {1500, 1700}, {1800, 1900}});
}

}  // namespace

TEST(StepAlignment, InsideAStepTheSameOffsetIntoTheSameStep) {
    const StepAlignment s = handWorked();
    EXPECT_EQ(s.pairedSteps(), 3u);
    EXPECT_EQ(s.toB(100), 1000);  // step 0 starts together
    EXPECT_EQ(s.toB(150), 1050);  // 50 into step 0
    EXPECT_EQ(s.toB(350), 1300);  // 50 into step 1, which starts at 1250 in B
    EXPECT_EQ(s.toB(599), 1599);  // last ns of step 2
}

TEST(StepAlignment, OutsideStepsTheNearestStepsOffset) {
    const StepAlignment s = handWorked();
    EXPECT_EQ(s.toB(50), 950);    // before step 0: 900
    EXPECT_EQ(s.toB(220), 1120);  // 20 after step 0, 80 before step 1: step 0's 900
    EXPECT_EQ(s.toB(290), 1240);  // 90 after step 0, 10 before step 1: step 1's 950
    EXPECT_EQ(s.stepAt(250), 0);  // 50 from each: the earlier step
    EXPECT_EQ(s.toB(250), 1150);
    EXPECT_EQ(s.toB(700), 1700);  // after the last paired step: step 2's 1000
}

TEST(StepAlignment, AViewMovesByTheOffsetAtItsCentreAndKeepsItsLength) {
    const StepAlignment s = handWorked();
    // Centre 370, in step 1 (offset 950).
    EXPECT_EQ(s.viewInB({320, 420}), (ViewRange{1270, 1370}));
    // Centre 380 in step 1: A's step 1 starts 20 of 200 ns into the view,
    // and so does B's (1250 - 1230), so both sit at the same x.
    const ViewRange b = s.viewInB({280, 480});
    EXPECT_EQ(b, (ViewRange{1230, 1430}));
    EXPECT_EQ(1250 - b.start, 300 - 280);
    // Centre 250, the tie between steps 0 and 1: step 0's offset.
    EXPECT_EQ(s.viewInB({150, 350}), (ViewRange{1050, 1250}));
}

TEST(StepAlignment, TheInverseMapsBackWithBsSteps) {
    const StepAlignment back = handWorked().inverse();
    EXPECT_EQ(back.pairedSteps(), 3u);
    EXPECT_EQ(back.toB(1300), 350);  // 50 into B's step 1 is 50 into A's
    // B's unpaired fourth step: after B's last paired step [1500, 1700),
    // whose offset A - B is -1000.
    EXPECT_EQ(back.toB(1850), 850);
    EXPECT_EQ(back.viewInB({1230, 1430}), (ViewRange{280, 480}));
}

TEST(StepAlignment, WithoutStepsEachRunKeepsItsClock) {
    const StepAlignment none;
    EXPECT_EQ(none.stepAt(5), -1);
    EXPECT_EQ(none.toB(12345), 12345);
    EXPECT_EQ(none.viewInB({10, 20}), (ViewRange{10, 20}));
    // A run without steps pairs none of the other's.
    const StepAlignment oneSided({{100, 200}}, {});
    EXPECT_EQ(oneSided.pairedSteps(), 0u);
    EXPECT_EQ(oneSided.toB(150), 150);
}

TEST(StepAlignment, StepsArePairedInTimeOrderWhateverOrderTheyCameIn) {
    const StepAlignment s({{300, 450}, {100, 200}}, {{1250, 1350}, {1000, 1150}});
    EXPECT_EQ(s.toB(150), 1050);
    EXPECT_EQ(s.toB(350), 1300);
}

TEST(StepAlignment, OverlappingWindowsTheLaterStepHoldsItsStart) {
    // A slow rank still in step 0 until 320 while step 1 starts at 300.
    const StepAlignment s({{100, 320}, {300, 450}}, {{1000, 1200}, {1250, 1400}});
    EXPECT_EQ(s.stepAt(310), 1);
    EXPECT_EQ(s.toB(310), 1260);
    EXPECT_EQ(s.toB(290), 1190);  // before step 1 starts: still step 0
}
