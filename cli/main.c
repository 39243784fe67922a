/* main.c - the entrysim program: the command line is es_main
 * (commands.c), in the library so that tests can call it. */
#include "commands.h"

int main(int argc, char **argv)
{
    return es_main(argc, argv);
}
