/* history: placeholder while the command is being written (replaced in the same session). */
#include "cli/cli.h"
#include "util/util.h"

int cmd_history(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return error("pgolab history is not available in this build yet");
}
