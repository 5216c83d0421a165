// SPDX-License-Identifier: MIT
// journal: the structured journald fields of one log record, built without libsystemd.

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "daemon/sys/journal.h"

static char *field(const char *name, const char *value)
{
    char *f = xasprintf("%s=%s", name, value);

    for (char *p = f; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return f;
}

void journal_fields_build(JournalFields *f, int priority, const char *server, const char *event,
                          const char *message)
{
    char prio[8];
    _cleanup_free_ char *text = NULL;

    memset(f, 0, sizeof(*f));
    snprintf(prio, sizeof(prio), "%d", priority < 0 ? 0 : priority > 7 ? 7 : priority);
    /* Plain readers (journalctl without -o verbose) still see which server spoke. */
    text = server ? xasprintf("[%s] %s", server, message) : xstrdup(message);
    f->field[f->n++] = field("MESSAGE", text);
    f->field[f->n++] = field("PRIORITY", prio);
    f->field[f->n++] = field("SYSLOG_IDENTIFIER", "mcpd");
    if (server)
        f->field[f->n++] = field("MCPD_SERVER", server);
    if (event)
        f->field[f->n++] = field("MCPD_EVENT", event);
}

void journal_fields_deinit(JournalFields *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->field[i]);
    memset(f, 0, sizeof(*f));
}
