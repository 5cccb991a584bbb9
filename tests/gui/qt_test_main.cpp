// main() of the window tests: Qt's offscreen platform at 96 dpi, so pixel
// positions do not depend on the machine, and settings (saved layouts) under
// a test organisation, never the user's.
#include <gtest/gtest.h>
#include <QApplication>

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("overlapscope-test");
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
