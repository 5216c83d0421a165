// SPDX-License-Identifier: MIT
// sendbatch without liburing: never available, so every write is a send(2) of its own.

#include <errno.h>

#include "daemon/downstream/sendbatch.h"

SendBatch *sendbatch_new(const char **whyp)
{
    if (whyp)
        *whyp = "mcpd was built without liburing";
    return NULL;
}

void sendbatch_free(SendBatch *b)
{
    (void)b;
}

size_t sendbatch_capacity(const SendBatch *b)
{
    (void)b;
    return 0;
}

bool sendbatch_add(SendBatch *b, int fd, const void *data, size_t n, void *tag)
{
    (void)b, (void)fd, (void)data, (void)n, (void)tag;
    return false;
}

int sendbatch_submit(SendBatch *b, SendBatchDoneFn done, void *ud)
{
    (void)b, (void)done, (void)ud;
    return -ENOSYS;
}
