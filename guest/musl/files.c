/* files.c - file system calls under the guest root: open/read/lseek/fstat
 * on a data file, a directory listing, and a missing file's errno.
 * Run with the guest root at the guest/ source directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/data/input.txt";
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[256];
    int lines = 0, words = 0;
    long chars = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        chars += (long)strlen(line);
        int in = 0;
        for (char *p = line; *p; p++) {
            int sp = *p == ' ' || *p == '\n' || *p == '\t';
            if (!sp && !in)
                words++;
            in = !sp;
        }
    }
    fclose(f);
    printf("%s: %d lines, %d words, %ld chars\n", path, lines, words, chars);

    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return 2;
    printf("size %lld, regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode) ? 1 : 0);
    char buf[16] = {0};
    lseek(fd, -10, SEEK_END);
    ssize_t r = read(fd, buf, sizeof buf - 1);
    printf("last %zd bytes: ", r);
    for (ssize_t i = 0; i < r; i++)
        putchar(buf[i] == '\n' ? '|' : buf[i]);
    putchar('\n');
    close(fd);

    errno = 0;
    if (open("/data/no-such-file", O_RDONLY) < 0)
        printf("missing file: %s\n", strerror(errno));
    return 0;
}
