/* hello.c - the classic, through musl's stdio. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from musl, %d argument%s\n", argc - 1, argc == 2 ? "" : "s");
    for (int i = 1; i < argc; i++)
        printf("  %s\n", argv[i]);
    return 0;
}
