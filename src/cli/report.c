/* report: placeholder while the command is being written (replaced in the same session). */
#include "cli/cli.h"
#include "util/util.h"

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return error("pgolab report is not available in this build yet");
}
