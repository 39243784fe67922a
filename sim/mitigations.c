/* mitigations.c - placeholder until the mitigation alternatives land
 * (issue 4, in progress this session): only the default set is accepted. */
#include <stdio.h>
#include <string.h>

#include "mitigations.h"

int es_mitigations_parse(const char *list, unsigned *out, char *err, size_t errlen)
{
    if (!strcmp(list, "") || !strcmp(list, "nospec")) {
        *out = ES_MIT_DEFAULT;
        return 0;
    }
    snprintf(err, errlen, "mitigations other than the default are not built yet");
    return -1;
}

void es_mitigations_name(unsigned mit, char *buf, size_t n)
{
    snprintf(buf, n, "%s", mit & ES_MIT_NOSPEC ? "nospec" : "none");
}

int es_kernel_set_mitigations(es_machine *m, unsigned mit)
{
    if (mit == ES_MIT_DEFAULT)
        return 0;
    snprintf(m->message, sizeof m->message, "mitigations are not built yet");
    return -1;
}

unsigned es_kernel_mitigations(const es_machine *m) { (void)m; return ES_MIT_DEFAULT; }
