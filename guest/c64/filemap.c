/* filemap.c - a file mapping as Linux has it (tests/e2e filemap_*):
 * MADV_DONTNEED on a private file mapping shows the file again, the rest
 * of the last page reads 0, and a page wholly past the end of the file is
 * SIGBUS (status 135).  argv[1]: a file shorter than one page. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        return 3;
    volatile char *p = mmap(0, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return 4;
    printf("file:    %.8s\n", (const char *)p);
    memcpy((char *)p, "XXXXXXXX", 8);
    printf("copy:    %.8s\n", (const char *)p);
    if (madvise((void *)p, 4096, MADV_DONTNEED))
        return 5;
    printf("dropped: %.8s\n", (const char *)p);
    printf("tail:    %d\n", p[4095]);
    fflush(stdout);
    return p[4096]; /* past EOF: SIGBUS */
}
